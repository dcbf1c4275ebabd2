package ghrun

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestPlainHTTPOnlyToALiteralLoopbackNeverThroughAProxy: plain http carries the token only to
// a literal loopback address, directly. A host under localhost (a pasted run URL on
// x.github.localhost, -R github.localhost/o/r) went over http through HTTP_PROXY, and the
// proxy saw "Authorization: Bearer …"; a GITHUB_API_URL on 127.0.0.1 went through a proxy the
// transport named. Now the name goes over https (the proxy only sees a CONNECT), the loopback
// API is reached without the proxy, and http://localhost is refused.
func TestPlainHTTPOnlyToALiteralLoopbackNeverThroughAProxy(t *testing.T) {
	proxy := newForeignServer(t) // records every Authorization header it sees
	api := newForeignServer(t)   // the API on 127.0.0.1
	proxyURL, _ := url.Parse(proxy.URL)
	viaProxy := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(proxyURL)}}
	env := func(k string) string {
		if k == EnvGHToken {
			return testToken
		}
		return ""
	}
	tests := []struct {
		name, host, apiURL string
		wantAPIAuth        bool // the loopback API receives the token
	}{
		{name: "a host under github.localhost", host: "x.github.localhost"},
		{name: "github.localhost", host: "github.localhost"},
		{name: "GITHUB_API_URL on 127.0.0.1", apiURL: api.URL + "/api/v3", wantAPIAuth: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, proxySeenBefore := proxy.seen()
			_, apiSeenBefore := api.seen()
			c, err := NewClient(ClientOptions{Host: tt.host, APIURL: tt.apiURL, Getenv: env, HTTPClient: viaProxy, MaxAttempts: 1, Sleep: (&sleeper{}).Sleep})
			if err != nil {
				t.Fatal(err)
			}
			if tt.host != "" && !strings.HasPrefix(c.BaseURL(), "https://") {
				t.Errorf("API of %s is %s, want https", tt.host, c.BaseURL())
			}
			c.gh.Repositories.Get(context.Background(), "o", "r") // the answer does not matter
			_, proxySeen := proxy.seen()
			if len(proxySeen) > len(proxySeenBefore) {
				t.Errorf("the proxy saw the token: %v", proxySeen[len(proxySeenBefore):])
			}
			_, apiSeen := api.seen()
			if got := len(apiSeen) > len(apiSeenBefore); got != tt.wantAPIAuth {
				t.Errorf("the loopback API got the token: %v, want %v", got, tt.wantAPIAuth)
			}
		})
	}
	for _, apiURL := range []string{"http://localhost:9/api/v3", "http://x.github.localhost/", "http://localhost./"} {
		if _, err := NewClient(ClientOptions{APIURL: apiURL, Getenv: env, HTTPClient: viaProxy}); err == nil ||
			!strings.Contains(err.Error(), "not a literal loopback address") {
			t.Errorf("%s: got %v, want a refusal of plain http to a name", apiURL, err)
		}
	}
}
