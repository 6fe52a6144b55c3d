package integration

// klogMapping maps klog's expected output (k8s.io/klog/v2/test) to this
// backend's: slog JSON lines with the caller as "caller" and no time (see
// logrCaller). Differences from klog's text are deliberate and come from slog
// JSON semantics or from logrbridge's documented rendering:
//   - V(n) is slog level -n (DEBUG+3 for V(1), DEBUG-5 for V(9));
//   - the error key is "error"; duplicate keys are all written (JSON
//     handlers do not de-duplicate), in call order;
//   - durations are slog JSON durations (nanoseconds);
//   - non-string keys are rendered with fmt.Sprint;
//   - klog.KObj/KRef/KObjSlice values are {"name","namespace"} objects;
//   - a panicking MarshalLog names MarshalLog (klog's text names WriteText);
//   - klog's Format wrapper and plain structs are JSON objects;
//   - a value that cannot be JSON-encoded gets slog's "!ERROR:" text;
//   - klog's -vmodule is not supported, so the vmodule line is absent when
//     klog uses the logger as its backend.
func klogMapping(asBackend bool) map[string]string {
	m := map[string]string{
		`E output.go:<LINE>] "error nil" err="<panic: runtime error: invalid memory address or nil pointer dereference>"
`: `{"level":"ERROR","caller":"test/output.go:<LINE>","msg":"error nil","error":"<panic: runtime error: invalid memory address or nil pointer dereference>"}
`,
		`E output.go:<LINE>] "error panic" err="<panic: fake Error panic>"
`: `{"level":"ERROR","caller":"test/output.go:<LINE>","msg":"error panic","error":"<panic: fake Error panic>"}
`,
		`E output.go:<LINE>] "test" err="whoops"
`: `{"level":"ERROR","caller":"test/output.go:<LINE>","msg":"test","error":"whoops"}
`,
		`I output.go:<LINE>] "KObjSlice" pods=["kube-system/pod-1","kube-system/pod-2"]
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"KObjSlice","pods":[{"name":"pod-1","namespace":"kube-system"},{"name":"pod-2","namespace":"kube-system"}]}
`,
		`I output.go:<LINE>] "KObjs" pods=[{"name":"pod-1","namespace":"kube-system"},{"name":"pod-2","namespace":"kube-system"}]
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"KObjs","pods":[{"name":"pod-1","namespace":"kube-system"},{"name":"pod-2","namespace":"kube-system"}]}
`,
		`I output.go:<LINE>] "\"quoted\"" key="\"quoted value\""
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"\"quoted\"","key":"\"quoted value\""}
`,
		`I output.go:<LINE>] "both odd" basekey1="basevar1" basekey2="(MISSING)" akey="avalue" akey2="(MISSING)"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"both odd","basekey1":"basevar1","basekey2":"(MISSING)","akey":"avalue","akey2":"(MISSING)"}
`,
		`I output.go:<LINE>] "cycle" list="<internal error: json: unsupported value: encountered a cycle via *test.myList>"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"cycle","list":"!ERROR:json: unsupported value: encountered a cycle via *test.myList"}
`,
		`I output.go:<LINE>] "duplicates" trace="101112131415161718191a1b1c1d1e1f" span="0102030405060708"
I output.go:<LINE>] "duplicates" trace="101112131415161718191a1b1c1d1e1f" span="1112131415161718"
I output.go:<LINE>] "duplicates" trace="101112131415161718191a1b1c1d1e1f" span="0102030405060708"
I output.go:<LINE>] "duplicates" trace="101112131415161718191a1b1c1d1e1f" span="2122232425262728"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"duplicates","trace":"101112131415161718191a1b1c1d1e1f","span":"0102030405060708"}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"duplicates","trace":"101112131415161718191a1b1c1d1e1f","span":"0102030405060708","trace":"101112131415161718191a1b1c1d1e1f","span":"1112131415161718"}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"duplicates","trace":"101112131415161718191a1b1c1d1e1f","span":"0102030405060708"}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"duplicates","trace":"101112131415161718191a1b1c1d1e1f","span":"0102030405060708","trace":"101112131415161718191a1b1c1d1e1f","span":"2122232425262728"}
`,
		`I output.go:<LINE>] "duplicates" trace="101112131415161718191a1b1c1d1e1f" span="0102030405060708" a=1
I output.go:<LINE>] "duplicates" trace="101112131415161718191a1b1c1d1e1f" a=1 b=2 span="1112131415161718"
I output.go:<LINE>] "duplicates" trace="101112131415161718191a1b1c1d1e1f" span="0102030405060708" a=1
I output.go:<LINE>] "duplicates" trace="101112131415161718191a1b1c1d1e1f" a=1 c=3 span="2122232425262728" d=4
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"duplicates","trace":"101112131415161718191a1b1c1d1e1f","span":"0102030405060708","a":1}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"duplicates","trace":"101112131415161718191a1b1c1d1e1f","span":"0102030405060708","a":1,"b":2,"trace":"101112131415161718191a1b1c1d1e1f","span":"1112131415161718"}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"duplicates","trace":"101112131415161718191a1b1c1d1e1f","span":"0102030405060708","a":1}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"duplicates","trace":"101112131415161718191a1b1c1d1e1f","span":"0102030405060708","a":1,"c":3,"trace":"101112131415161718191a1b1c1d1e1f","span":"2122232425262728","d":4}
`,
		`I output.go:<LINE>] "helper" akey="avalue"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"helper","akey":"avalue"}
`,
		`I output.go:<LINE>] "integer keys" %!s(int=1)="value" %!s(int=2)="value2" akey="avalue" akey2="(MISSING)"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"integer keys","1":"value","2":"value2","akey":"avalue","akey2":"(MISSING)"}
`,
		`I output.go:<LINE>] "klog.Format" s=<
	{
	  "Name": "worker",
	  "Kind": "pod"
	}
 >
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"klog.Format","s":{"Name":"worker","Kind":"pod"}}
`,
		`I output.go:<LINE>] "map keys" map[test:%!s(bool=true)]="test"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"map keys","map[test:true]":"test"}
`,
		`I output.go:<LINE>] "maps" s={"hello":"world"} i={"1":2,"3":4}
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"maps","s":{"hello":"world"},"i":{"1":2,"3":4}}
`,
		`I output.go:<LINE>] "marshaler nil" obj="<panic: value method k8s.io/klog/v2.ObjectRef.WriteText called using nil *ObjectRef pointer>"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"marshaler nil","obj":"<panic: value method k8s.io/klog/v2.ObjectRef.MarshalLog called using nil *ObjectRef pointer>"}
`,
		`I output.go:<LINE>] "marshaler panic" obj="<panic: fake MarshalLog panic>"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"marshaler panic","obj":"<panic: fake MarshalLog panic>"}
`,
		`I output.go:<LINE>] "marshaler recursion" obj={}
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"marshaler recursion","obj":{}}
`,
		`I output.go:<LINE>] "odd WithValues" keyWithoutValue="(MISSING)"
I output.go:<LINE>] "odd WithValues" keyWithoutValue="(MISSING)" anotherKeyWithoutValue="(MISSING)"
I output.go:<LINE>] "odd WithValues" keyWithoutValue="(MISSING)"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"odd WithValues","keyWithoutValue":"(MISSING)"}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"odd WithValues","keyWithoutValue":"(MISSING)","anotherKeyWithoutValue":"(MISSING)"}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"odd WithValues","keyWithoutValue":"(MISSING)"}
`,
		`I output.go:<LINE>] "odd arguments" akey="avalue" akey2="(MISSING)"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"odd arguments","akey":"avalue","akey2":"(MISSING)"}
`,
		`I output.go:<LINE>] "slices" s=["hello","world"] i=[1,2,3]
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"slices","s":["hello","world"],"i":[1,2,3]}
`,
		`I output.go:<LINE>] "stringer nil" stringer="<panic: runtime error: invalid memory address or nil pointer dereference>"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"stringer nil","stringer":"<panic: runtime error: invalid memory address or nil pointer dereference>"}
`,
		`I output.go:<LINE>] "stringer panic" stringer="<panic: fake String panic>"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"stringer panic","stringer":"<panic: fake String panic>"}
`,
		`I output.go:<LINE>] "struct keys" {name}="value" test="other value" key="val"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"struct keys","{name}":"value","test":"other value","key":"val"}
`,
		`I output.go:<LINE>] "structs" s={"Name":"worker","Kind":"pod"}
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"structs","s":{"Name":"worker","Kind":"pod"}}
`,
		`I output.go:<LINE>] "test"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test"}
`,
		`I output.go:<LINE>] "test" X="y" duration="1m0s" A="b"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","duration":3600000000000,"X":"y","duration":60000000000,"A":"b"}
`,
		`I output.go:<LINE>] "test" akey9="avalue9" akey8="avalue8" akey1="avalue1" akey5="avalue5" akey4="avalue4"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","akey9":"avalue9","akey8":"avalue8","akey1":"avalue1","akey5":"avalue5","akey4":"avalue4"}
`,
		`I output.go:<LINE>] "test" akey="<&>"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","akey":"<&>"}
`,
		`I output.go:<LINE>] "test" akey="avalue"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","akey":"avalue"}
`,
		`I output.go:<LINE>] "test" err="whoops"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","err":"whoops"}
`,
		`I output.go:<LINE>] "test" firstKey=1
I output.go:<LINE>] "test" firstKey=1 secondKey=2
I output.go:<LINE>] "test" firstKey=1
I output.go:<LINE>] "test" firstKey=1 secondKey=3
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","firstKey":1}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","firstKey":1,"secondKey":2}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","firstKey":1}
{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","firstKey":1,"secondKey":3}
`,
		`I output.go:<LINE>] "test" ints=["<KObjSlice needs a slice of values implementing KMetadata, got type int>"]
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","ints":"<KObjSlice needs a slice of values implementing KMetadata, got type int>"}
`,
		`I output.go:<LINE>] "test" logger="hello.world" akey="avalue"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","logger":"hello.world","akey":"avalue"}
`,
		`I output.go:<LINE>] "test" logger="me" akey="avalue"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","logger":"me","akey":"avalue"}
`,
		`I output.go:<LINE>] "test" pod="kube-system/pod-1"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","pod":{"name":"pod-1","namespace":"kube-system"}}
`,
		`I output.go:<LINE>] "test" pods="<KObjSlice needs a slice, got type int>"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","pods":"<KObjSlice needs a slice, got type int>"}
`,
		`I output.go:<LINE>] "test" pods=["kube-system/pod-1",null]
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","pods":[{"name":"pod-1","namespace":"kube-system"},null]}
`,
		`I output.go:<LINE>] "test" pods=null
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test","pods":null}
`,
		`I output.go:<LINE>] "test-arguments" akey="avalue2"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test-arguments","akey":"avalue","akey":"avalue2"}
`,
		`I output.go:<LINE>] "test-with-values" akey="avalue2"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"test-with-values","akey":"avalue","akey":"avalue2"}
`,
		`I output.go:<LINE>] "you see me"
`: `{"level":"DEBUG-5","caller":"test/output.go:<LINE>","msg":"you see me"}
`,
	}
	if asBackend {
		for k, v := range klogBackendMapping {
			m[k] = v
		}
	}
	return m
}

// klogBackendMapping holds the cases that only exist when klog's own
// functions (Info, Infof, Warning, ErrorS, V().InfoS, ...) log through the
// logger. klog passes formatted messages without their trailing newline and
// turns warnings into Info.
var klogBackendMapping = map[string]string{
	`E output.go:<LINE>] "hello world\n"
`: `{"level":"ERROR","caller":"test/output.go:<LINE>","msg":"hello world"}
`,
	`E output.go:<LINE>] "helloworld\n"
`: `{"level":"ERROR","caller":"test/output.go:<LINE>","msg":"helloworld"}
`,
	`E output.go:<LINE>] "one world" err="hello"
`: `{"level":"ERROR","caller":"test/output.go:<LINE>","msg":"one world","error":"hello"}
`,
	`E output.go:<LINE>] "world" err="hello"
`: `{"level":"ERROR","caller":"test/output.go:<LINE>","msg":"world","error":"hello"}
`,
	`I output.go:<LINE>] "Format" config=<
	{
	  "Kind": "config",
	  "RealField": 42
	}
 >
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"Format","config":{"Kind":"config","RealField":42}}
`,
	`I output.go:<LINE>] "hello one world\n"
`: `{"level":"DEBUG+3","caller":"test/output.go:<LINE>","msg":"hello one world"}
`,
	`I output.go:<LINE>] "hello world\n"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"hello world"}
`,
	`I output.go:<LINE>] "hello" what="one world"
`: `{"level":"DEBUG+3","caller":"test/output.go:<LINE>","msg":"hello","what":"one world"}
`,
	`I output.go:<LINE>] "hello" what="world"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"hello","what":"world"}
`,
	`I output.go:<LINE>] "hellooneworld\n"
`: `{"level":"DEBUG+3","caller":"test/output.go:<LINE>","msg":"hellooneworld"}
`,
	`I output.go:<LINE>] "helloworld\n"
`: `{"level":"INFO","caller":"test/output.go:<LINE>","msg":"helloworld"}
`,
	`I output.go:<LINE>] "v=11: you see me because of -vmodule output=11"
`: ``,
}
