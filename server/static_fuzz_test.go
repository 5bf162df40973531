package server

import (
	"slices"
	"strings"
	"testing"
)

// FuzzAcceptsEncoding checks the Accept-Encoding reading against the rules
// of RFC 9110 §12.5.3 as metamorphic properties: a coding listed by name
// decides over "*" wherever it stands, q=0 refuses, names are
// case-insensitive, and a header naming neither the coding nor "*" refuses.
func FuzzAcceptsEncoding(f *testing.F) {
	for _, h := range []string{
		"gzip, deflate, br", "gzip;q=0.5", "gzip;q=0", "GZIP", "*", "identity", "", "xgzip",
		"*;q=0, gzip", "gzip;q=0, *", "br;q=0.000", "br; q=0", "br;Q=0", "br;q=0.5;q=0", "*;q=0",
		"gzip;q=1.000", "gzip;q=0.001", "gzip;q=-0", "gzip;q=0e0", "gzip;q=2", "gzip;level=0", ",,;,",
	} {
		f.Add(h)
	}
	f.Fuzz(func(t *testing.T, header string) {
		for _, enc := range []string{"gzip", "br"} {
			got := acceptsEncoding(header, enc)
			if got != acceptsEncoding(header, strings.ToUpper(enc)) {
				t.Fatalf("acceptsEncoding(%q) differs between %q and its upper case", header, enc)
			}
			if got && !strings.Contains(strings.ToLower(header), enc) && !strings.Contains(header, "*") {
				t.Fatalf("acceptsEncoding(%q, %q) = true, but the header names neither it nor *", header, enc)
			}
			// A coding listed by name, first, with no weight, is acceptable;
			// listed first with q=0 it is not, whatever follows ("*" included).
			if !acceptsEncoding(enc+", "+header, enc) {
				t.Fatalf("acceptsEncoding(%q, %q) = false", enc+", "+header, enc)
			}
			if acceptsEncoding(enc+";q=0, "+header, enc) {
				t.Fatalf("acceptsEncoding(%q, %q) = true", enc+";q=0, "+header, enc)
			}
			// A wildcard added at the end decides only when the coding is
			// not listed by name.
			named := listsByName(header, enc)
			for _, star := range []string{"*", "*;q=0"} {
				want := got
				if !named && !slices.Contains(headerTokens(header), "*") {
					want = star == "*"
				}
				if again := acceptsEncoding(header+", "+star, enc); again != want {
					t.Fatalf("acceptsEncoding(%q, %q) = %v, want %v", header+", "+star, enc, again, want)
				}
			}
			// Listing the coding by name at the end decides when it was not
			// listed before, even after a wildcard.
			if !named {
				if !acceptsEncoding(header+", "+enc, enc) {
					t.Fatalf("acceptsEncoding(%q, %q) = false: the coding is listed by name", header+", "+enc, enc)
				}
				if acceptsEncoding(header+", "+enc+";q=0", enc) {
					t.Fatalf("acceptsEncoding(%q, %q) = true: the coding is refused by name", header+", "+enc+";q=0", enc)
				}
			}
		}
	})
}

// listsByName reports whether header has an entry whose coding is enc.
func listsByName(header, enc string) bool {
	for _, part := range strings.Split(header, ",") {
		token, _, _ := strings.Cut(part, ";")
		if strings.EqualFold(strings.TrimSpace(token), enc) {
			return true
		}
	}
	return false
}

// headerTokens is the header's codings.
func headerTokens(header string) []string {
	var out []string
	for _, part := range strings.Split(header, ",") {
		token, _, _ := strings.Cut(part, ";")
		out = append(out, strings.TrimSpace(token))
	}
	return out
}
