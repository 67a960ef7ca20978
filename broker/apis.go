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
func sortedAPIs() []apiDef {
	out := make([]apiDef, 0, len(apis))
	for _, a := range apis {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
}
