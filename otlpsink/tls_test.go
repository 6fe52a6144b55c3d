package otlpsink

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/asyncbus/asyncbus"
)

// pki is a test CA with a server certificate for 127.0.0.1 and a client
// certificate, all written as PEM files.
type pki struct {
	caFile, clientCert, clientKey, otherKey string
	server                                  tls.Certificate
	pool                                    *x509.CertPool
}

func newPKI(t *testing.T) *pki {
	t.Helper()
	dir := t.TempDir()
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600))
		return p
	}
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		require.NoError(t, err)
		return k
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		der, err := x509.MarshalPKCS8PrivateKey(k)
		require.NoError(t, err)
		return der
	}
	caKey := newKey()
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	require.NoError(t, err)
	ca, err := x509.ParseCertificate(caDER)
	require.NoError(t, err)
	issue := func(serial int64, usage x509.ExtKeyUsage, k *ecdsa.PrivateKey) []byte {
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: "test"},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		require.NoError(t, err)
		return der
	}
	p := &pki{pool: x509.NewCertPool()}
	p.pool.AddCert(ca)
	p.caFile = write("ca.pem", "CERTIFICATE", caDER)
	serverKey, clientKey := newKey(), newKey()
	p.server = tls.Certificate{Certificate: [][]byte{issue(2, x509.ExtKeyUsageServerAuth, serverKey)}, PrivateKey: serverKey}
	p.clientCert = write("client.pem", "CERTIFICATE", issue(3, x509.ExtKeyUsageClientAuth, clientKey))
	p.clientKey = write("client-key.pem", "PRIVATE KEY", keyDER(clientKey))
	p.otherKey = write("other-key.pem", "PRIVATE KEY", keyDER(newKey()))
	return p
}

// newTLSReceiver is newReceiver behind TLS with p's server certificate,
// requiring a client certificate signed by p's CA.
func newTLSReceiver(t *testing.T, p *pki) *receiver {
	rc := &receiver{t: t, received: make(chan struct{}, 1<<16)}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.TLS = &tls.Config{
		Certificates: []tls.Certificate{p.server},
		ClientAuth:   tls.RequireAndVerifyClientCert,
		ClientCAs:    p.pool,
	}
	rc.srv.Config.ErrorLog = log.New(&rc.tlsLog, "", 0) // handshake failures, for the tests to check
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc
}

// TestTLSFromEnvEndToEnd: with only the environment's CA and client
// certificate, a record reaches a collector that verifies both sides.
func TestTLSFromEnvEndToEnd(t *testing.T) {
	p := newPKI(t)
	rc := newTLSReceiver(t, p)
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rc.srv.URL)
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_ENDPOINT", "")
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE", p.caFile)
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", filepath.Join(t.TempDir(), "missing.pem")) // the logs variable wins
	t.Setenv("OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE", p.clientCert)
	t.Setenv("OTEL_EXPORTER_OTLP_CLIENT_KEY", p.clientKey)
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE", "")
	t.Setenv("OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY", "")
	h, err := NewHandler(Options{}, nil)
	require.NoError(t, err)
	slog.New(h).Info("over mutual TLS", "seq", 0)
	require.NoError(t, h.Close())
	require.Len(t, rc.requests(), 1)
	assert.Zero(t, h.Stats().Failed)
}

// TestTLSWithoutClientCertificateIsRefused: the same collector refuses a
// sink that trusts its CA but has no client certificate; the record is
// counted as failed, not lost silently.
func TestTLSWithoutClientCertificateIsRefused(t *testing.T) {
	p := newPKI(t)
	rc := newTLSReceiver(t, p)
	for _, k := range []string{"ENDPOINT", "CERTIFICATE", "CLIENT_CERTIFICATE", "CLIENT_KEY"} {
		t.Setenv("OTEL_EXPORTER_OTLP_"+k, "")
		t.Setenv("OTEL_EXPORTER_OTLP_LOGS_"+k, "")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_CERTIFICATE", p.caFile)
	h, err := NewHandler(Options{Endpoint: rc.srv.URL, RetryInitial: time.Millisecond, RetryMax: 10 * time.Millisecond, CloseTimeout: 200 * time.Millisecond},
		&asyncbus.Options{OnError: func(error) {}})
	require.NoError(t, err)
	slog.New(h).Info("no client certificate")
	assert.Error(t, h.Close(), "Close reports the records it could not deliver")
	assert.Empty(t, rc.requests())
	assert.EqualValues(t, 1, h.Stats().Failed)
	// The handshake reached the client certificate, so the client trusted
	// the server through the CA file; it failed there. Without the CA file
	// the client would have refused the server's certificate first.
	rc.srv.Close() // no more handshakes: the log is complete
	assert.Contains(t, rc.tlsLog.String(), "client didn't provide a certificate")
	assert.NotContains(t, rc.tlsLog.String(), "bad certificate")
}

// TestTLSFromEnvErrors: a certificate variable that names an unreadable or
// wrong file is an error from New, naming the variable; an explicit
// TLSConfig or HTTPClient means the variables are not read at all.
func TestTLSFromEnvErrors(t *testing.T) {
	p := newPKI(t)
	missing := filepath.Join(t.TempDir(), "missing.pem")
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	require.NoError(t, os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600))
	const pre = "OTEL_EXPORTER_OTLP_"
	for _, tc := range []struct {
		name    string
		opt     Options
		env     map[string]string
		wantErr string // "": no error
	}{
		{"none set", Options{}, nil, ""},
		{"CA only", Options{}, map[string]string{pre + "CERTIFICATE": p.caFile}, ""},
		{"client pair only", Options{}, map[string]string{pre + "CLIENT_CERTIFICATE": p.clientCert, pre + "CLIENT_KEY": p.clientKey}, ""},
		{"missing CA file", Options{}, map[string]string{pre + "CERTIFICATE": missing}, "OTEL_EXPORTER_OTLP_CERTIFICATE"},
		{"CA file without PEM", Options{}, map[string]string{pre + "LOGS_CERTIFICATE": notPEM}, "OTEL_EXPORTER_OTLP_LOGS_CERTIFICATE " + notPEM + ": no PEM certificate"},
		{"certificate without key", Options{}, map[string]string{pre + "CLIENT_CERTIFICATE": p.clientCert}, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE is set without OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{"key without certificate", Options{}, map[string]string{pre + "LOGS_CLIENT_KEY": p.clientKey}, "OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY is set without OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE"},
		{"key of another certificate", Options{}, map[string]string{pre + "CLIENT_CERTIFICATE": p.clientCert, pre + "CLIENT_KEY": p.otherKey}, "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE and OTEL_EXPORTER_OTLP_CLIENT_KEY"},
		{"logs pair wins over a bad generic pair", Options{}, map[string]string{
			pre + "LOGS_CLIENT_CERTIFICATE": p.clientCert, pre + "LOGS_CLIENT_KEY": p.clientKey,
			pre + "CLIENT_CERTIFICATE": p.clientCert, pre + "CLIENT_KEY": p.otherKey,
		}, ""},
		{"half a logs pair is not completed from the generic pair", Options{}, map[string]string{
			pre + "LOGS_CLIENT_CERTIFICATE": p.clientCert,
			pre + "CLIENT_CERTIFICATE":      p.clientCert, pre + "CLIENT_KEY": p.clientKey,
		}, "OTEL_EXPORTER_OTLP_LOGS_CLIENT_CERTIFICATE is set without OTEL_EXPORTER_OTLP_LOGS_CLIENT_KEY"},
		{"http endpoint: variables not read", Options{Endpoint: "http://c:4318"}, map[string]string{pre + "CERTIFICATE": missing, pre + "CLIENT_KEY": p.clientKey}, ""},
		{"insecure: variables not read", Options{Endpoint: "c:4318", Insecure: true}, map[string]string{pre + "CERTIFICATE": missing}, ""},
		{"TLSConfig option: variables not read", Options{TLSConfig: &tls.Config{}}, map[string]string{pre + "CERTIFICATE": missing}, ""},
		{"HTTPClient option: variables not read", Options{HTTPClient: &http.Client{}}, map[string]string{pre + "CERTIFICATE": missing}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := resolve(tc.opt, envOf(tc.env))
			if tc.wantErr != "" {
				require.Error(t, err)
				assert.Contains(t, err.Error(), tc.wantErr)
				return
			}
			require.NoError(t, err)
			require.NotNil(t, c.client)
		})
	}
}

// TestTLSFromEnvSettings: the CA file replaces the system roots and the
// client pair is offered; without variables Go's defaults stay untouched.
func TestTLSFromEnvSettings(t *testing.T) {
	p := newPKI(t)
	const pre = "OTEL_EXPORTER_OTLP_"
	c, err := resolve(Options{}, envOf(map[string]string{
		pre + "LOGS_CERTIFICATE": p.caFile, pre + "LOGS_CLIENT_CERTIFICATE": p.clientCert, pre + "LOGS_CLIENT_KEY": p.clientKey,
	}))
	require.NoError(t, err)
	cfg := c.client.Transport.(*http.Transport).TLSClientConfig
	require.NotNil(t, cfg)
	assert.True(t, cfg.RootCAs.Equal(p.pool), "the CA file's certificates are the roots")
	require.Len(t, cfg.Certificates, 1)

	leaf, err := x509.ParseCertificate(cfg.Certificates[0].Certificate[0])
	require.NoError(t, err)
	assert.EqualValues(t, 3, leaf.SerialNumber.Int64(), "the client certificate is offered")

	c, err = resolve(Options{}, envOf(nil))
	require.NoError(t, err)
	assertNoEnvTLS(t, c, "no variables: the default transport's TLS settings")

	c, err = resolve(Options{Endpoint: "http://c:4318"}, envOf(map[string]string{pre + "CERTIFICATE": p.caFile}))
	require.NoError(t, err)
	assertNoEnvTLS(t, c, "an http endpoint does not read the variables")
}

// assertNoEnvTLS checks that c's transport has no roots or client
// certificates of its own (a cloned http.DefaultTransport may carry a
// TLSClientConfig with only protocol settings once it has been used).
func assertNoEnvTLS(t *testing.T, c *config, msg string) {
	t.Helper()
	if cfg := c.client.Transport.(*http.Transport).TLSClientConfig; cfg != nil {
		assert.Nil(t, cfg.RootCAs, msg)
		assert.Empty(t, cfg.Certificates, msg)
	}
}
