package broker

// Log levels at run time: the BROKER_LOGGER config resource (type 8),
// Kafka's way of changing log4j levels with kafka-configs
// --entity-type broker-loggers. The resource name is the node id; each
// config is a logger name and its level (TRACE, DEBUG, INFO, WARN, ERROR,
// FATAL, OFF). IncrementalAlterConfigs SETs a level (on the logger and the
// loggers below it) or DELETEs it (back to its parent's); AlterConfigs and
// APPEND/SUBTRACT answer INVALID_REQUEST, as in Kafka. Levels live in the
// node's memory only, as Kafka's do: a restart starts from --log-level.
//
// Loggers (internal/loglevel; a name covers the names below it by dots):
//
//	root                     every logger
//	strata.broker            the server: listeners, topics, coordinators
//	strata.broker.partition  partition logs and replication
//	strata.metadata          the metadata quorum (raft)
//	kafka.request.logger     a DEBUG line per request (api, version, client, latency)

import (
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/strata-streaming/strata/internal/loglevel"
)

const (
	brokerLogger    = "strata.broker"
	partitionLogger = "strata.broker.partition"
	metadataLogger  = "strata.metadata"
	requestLogger   = "kafka.request.logger"
)

func newBrokerLoggers(inner slog.Handler) *loglevel.Registry {
	return loglevel.New(inner, []string{"strata", brokerLogger, partitionLogger, metadataLogger, requestLogger}, nil)
}

func (rc *requestContext) brokerLoggerNode(name string) (int16, string) {
	if name != strconv.Itoa(int(rc.s.cfg.NodeID)) {
		return kerr.InvalidRequest.Code, fmt.Sprintf("broker logger resource %q: name this broker's id, %d", name, rc.s.cfg.NodeID)
	}
	return 0, ""
}

func (rc *requestContext) describeBrokerLoggers(r kmsg.DescribeConfigsRequestResource, out *kmsg.DescribeConfigsResponseResource) {
	if code, msg := rc.brokerLoggerNode(r.ResourceName); code != 0 {
		out.ErrorCode, out.ErrorMessage = rc.countError(code), &msg
		return
	}
	all := rc.s.logLevels.All()
	for _, name := range rc.s.logLevels.Names() {
		if len(r.ConfigNames) > 0 && !contains(r.ConfigNames, name) {
			continue
		}
		c := kmsg.NewDescribeConfigsResponseResourceConfig()
		c.Name = name
		v := loglevel.Name(all[name].Level)
		c.Value = &v
		c.Source = kmsg.ConfigSourceDynamicBrokerLoggerConfig
		c.ConfigType = kmsg.ConfigTypeString
		out.Configs = append(out.Configs, c)
	}
}

func (rc *requestContext) alterBrokerLoggers(r kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) (int16, string) {
	if code, msg := rc.brokerLoggerNode(r.ResourceName); code != 0 {
		return code, msg
	}
	type change struct {
		name  string
		level slog.Level
		reset bool
	}
	var changes []change
	for _, c := range r.Configs {
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if c.Value == nil {
				return kerr.InvalidConfig.Code, "logger " + c.Name + ": no level"
			}
			level, ok := loglevel.Parse(*c.Value)
			if !ok {
				return kerr.InvalidConfig.Code, fmt.Sprintf("logger %s: %q is not a level (TRACE, DEBUG, INFO, WARN, ERROR, FATAL, OFF)", c.Name, *c.Value)
			}
			changes = append(changes, change{name: c.Name, level: level})
		case kmsg.IncrementalAlterConfigOpDelete:
			if _, ok := rc.s.logLevels.Get(c.Name); !ok {
				return kerr.InvalidConfig.Code, "no logger " + c.Name
			}
			changes = append(changes, change{name: c.Name, reset: true})
		default:
			return kerr.InvalidRequest.Code, "broker loggers take SET and DELETE only, not " + c.Op.String()
		}
		if c.Name == "" {
			return kerr.InvalidConfig.Code, "empty logger name"
		}
	}
	if validateOnly {
		return 0, ""
	}
	now := time.Now()
	for _, c := range changes {
		if c.reset {
			rc.s.logLevels.Reset(c.name, now)
		} else {
			rc.s.logLevels.Set(c.name, c.level, now)
		}
		rc.s.logger.Info("log level changed", "logger", c.name, "level", func() string {
			i, _ := rc.s.logLevels.Get(c.name)
			return loglevel.Name(i.Level)
		}())
	}
	return 0, ""
}
