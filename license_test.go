package asyncbus_test

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// mitText is the MIT License as the Open Source Initiative publishes it,
// below its title and copyright line.
const mitText = `Permission is hereby granted, free of charge, to any person obtaining a copy
of this software and associated documentation files (the "Software"), to deal
in the Software without restriction, including without limitation the rights
to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
copies of the Software, and to permit persons to whom the Software is
furnished to do so, subject to the following conditions:

The above copyright notice and this permission notice shall be included in all
copies or substantial portions of the Software.

THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
SOFTWARE.`

// TestLicenseIsMIT: the module root holds LICENSE, the MIT License word for
// word (line breaks aside) with the authors' copyright line, and the README
// names it. CI's go test fails without it.
func TestLicenseIsMIT(t *testing.T) {
	b, err := os.ReadFile("LICENSE")
	require.NoError(t, err, "a fresh clone shows a license")
	title, rest, ok := strings.Cut(string(b), "\n\n")
	require.True(t, ok)
	require.Equal(t, "MIT License", title)
	copyright, body, ok := strings.Cut(rest, "\n\n")
	require.True(t, ok)
	require.Regexp(t, `^Copyright \(c\) 20\d\d The asyncbus authors$`, copyright)
	require.Equal(t, strings.Fields(mitText), strings.Fields(body), "the MIT text, unchanged")

	readme, err := os.ReadFile("README.md")
	require.NoError(t, err)
	require.Contains(t, string(readme), "[MIT License](LICENSE)")
}
