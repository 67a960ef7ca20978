package broker

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/strata-streaming/strata/broker/console"
	"github.com/strata-streaming/strata/internal/tlsconf"
)

// consoleConnectPrefix marks the console's Connect REST client settings
// (kept with the security properties, so passwords are described as
// sensitive):
//
//	console.connect.url                   the REST API's base URL, http(s)://host:8083
//	console.connect.basic.auth.username   HTTP basic user for a secured REST listener
//	console.connect.basic.auth.password   … and its password
//	console.connect.ssl.*                 client TLS (ssl.truststore.location, ssl.keystore.location, …)
//
// Without console.connect.url, `strata server` with connect.enable=true
// names its embedded worker (SetConsoleConnectURL); the other settings
// apply to it as well.
const consoleConnectPrefix = "console.connect."

// consoleConnectKnown reports whether rest (after consoleConnectPrefix) is
// a setting the console reads.
func consoleConnectKnown(rest string) bool {
	switch rest {
	case "url", "basic.auth.username", "basic.auth.password":
		return true
	}
	return tlsconf.Known(rest)
}

// checkConsoleConnectURL checks console.connect.url.
func checkConsoleConnectURL(v string) error {
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("broker: %surl=%q: want http://host:port or https://host:port", consoleConnectPrefix, v)
	}
	return nil
}

// consoleHooks is what add-ons started beside the server (the embedded
// Connect worker, the stream jobs) tell the console.
type consoleHooks struct {
	mu         sync.Mutex
	connectURL string              // the embedded worker's REST URL
	jobs       []console.StreamJob // nil: not known
}

// SetConsoleConnectURL names the embedded Connect worker's REST API for
// the console, unless console.connect.url names one.
func (s *Server) SetConsoleConnectURL(u string) {
	s.consoleHooks.mu.Lock()
	defer s.consoleHooks.mu.Unlock()
	s.consoleHooks.connectURL = u
}

// SetConsoleStreamJobs tells the console which stream jobs this node runs.
func (s *Server) SetConsoleStreamJobs(jobs []console.StreamJob) {
	s.consoleHooks.mu.Lock()
	defer s.consoleHooks.mu.Unlock()
	s.consoleHooks.jobs = append([]console.StreamJob{}, jobs...)
}

func (s *Server) consoleStreamJobs() []console.StreamJob {
	s.consoleHooks.mu.Lock()
	defer s.consoleHooks.mu.Unlock()
	return s.consoleHooks.jobs
}

// consoleConnect returns the console's Connect settings: console.connect.*
// with the embedded worker's URL when console.connect.url is not set.
func (s *Server) consoleConnect() (func() console.ConnectConfig, error) {
	props := map[string]string{}
	ssl := map[string]string{}
	for k, v := range s.cfg.security {
		if rest, ok := strings.CutPrefix(k, consoleConnectPrefix); ok {
			props[rest] = v
			if strings.HasPrefix(rest, "ssl.") {
				ssl[rest] = v
			}
		}
	}
	client := &http.Client{Timeout: 15 * time.Second}
	if len(ssl) > 0 {
		src, err := tlsconf.New(ssl)
		if err != nil {
			return nil, fmt.Errorf("broker: %sssl.*: %w", consoleConnectPrefix, err)
		}
		client.Transport = &http.Transport{TLSClientConfig: src.ClientConfig(), Proxy: http.ProxyFromEnvironment}
	}
	return func() console.ConnectConfig {
		cc := console.ConnectConfig{URL: props["url"], Client: client, Username: props["basic.auth.username"], Password: props["basic.auth.password"]}
		if cc.URL == "" {
			s.consoleHooks.mu.Lock()
			cc.URL = s.consoleHooks.connectURL
			s.consoleHooks.mu.Unlock()
		}
		return cc
	}, nil
}
