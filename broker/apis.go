package broker

import (
	"fmt"
	"sort"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// apiDef is one Kafka API the broker serves. Each NN_name.go file registers
// its API in init, and ApiVersions is built from this registry, so what is
// advertised is exactly what is handled.
type apiDef struct {
	key        int16
	name       string
	minVersion int16
	maxVersion int16
	handle     func(rc *requestContext, req kmsg.Request) kmsg.Response
	// enabled, if set, gates the API on the server's config: while it
	// reports false the API is neither advertised nor served.
	enabled func(cfg *Config) bool
}

// servedBy reports whether a server with cfg serves the API.
func (a apiDef) servedBy(cfg *Config) bool { return a.enabled == nil || a.enabled(cfg) }

// lookupAPI returns the API a server with cfg serves under key.
func lookupAPI(cfg *Config, key int16) (apiDef, bool) {
	a, ok := apis[key]
	if !ok || !a.servedBy(cfg) {
		return apiDef{}, false
	}
	return a, true
}

// registerOptionalAPI is registerAPI for an API served only where enabled
// reports true.
func registerOptionalAPI[R kmsg.Request](key kmsg.Key, minVersion, maxVersion int16, enabled func(cfg *Config) bool, handle func(rc *requestContext, req R) kmsg.Response) {
	registerAPI(key, minVersion, maxVersion, handle)
	a := apis[key.Int16()]
	a.enabled = enabled
	apis[key.Int16()] = a
}

var apis = map[int16]apiDef{}

// registerAPI adds a handler for key with the inclusive version range.
func registerAPI[R kmsg.Request](key kmsg.Key, minVersion, maxVersion int16, handle func(rc *requestContext, req R) kmsg.Response) {
	probe := kmsg.RequestForKey(key.Int16())
	if probe == nil || maxVersion > probe.MaxVersion() {
		panic(fmt.Sprintf("broker: %s v%d is beyond what kmsg encodes", key.Name(), maxVersion))
	}
	if _, dup := apis[key.Int16()]; dup {
		panic("broker: api registered twice: " + key.Name())
	}
	apis[key.Int16()] = apiDef{
		key:        key.Int16(),
		name:       key.Name(),
		minVersion: minVersion,
		maxVersion: maxVersion,
		handle:     func(rc *requestContext, req kmsg.Request) kmsg.Response { return handle(rc, req.(R)) },
	}
}

// sortedAPIs returns the registry ordered by key.
func sortedAPIs() []apiDef { return servedAPIs(nil) }

// servedAPIs returns, ordered by key, the APIs a server with cfg serves;
// with a nil cfg, every registered API.
func servedAPIs(cfg *Config) []apiDef {
	out := make([]apiDef, 0, len(apis))
	for _, a := range apis {
		if cfg != nil && !a.servedBy(cfg) {
			continue
		}
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}
