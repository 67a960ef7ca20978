package main

// `strata server --set schema.registry.enable=true` runs a schema registry
// (package registry) in the node, a Kafka client of the node's own
// PLAINTEXT listener that keeps its schemas in the _schemas topic and
// serves Confluent's REST API on schema.registry.listen (default
// 127.0.0.1:8081). Every node of a cluster may run one; any of them takes
// writes. Other schema.registry.<key> settings are the registry's <key>,
// named as in Confluent's schema-registry.properties (registry.NewConfig):
//
//	schema.registry.listen                         host:port (or listeners=http(s)://host:port)
//	schema.registry.bootstrap.servers              the Kafka listener to use (kafkastore.bootstrap.servers)
//	schema.registry.kafkastore.topic               default _schemas
//	schema.registry.kafkastore.topic.replication.factor   exact, waiting for that many brokers; unset: min(3, live brokers)
//	schema.registry.kafkastore.timeout.ms          a write's time limit
//	schema.registry.kafkastore.security.protocol, …kafkastore.sasl.mechanism,
//	schema.registry.kafkastore.sasl.jaas.config, …kafkastore.ssl.*   its Kafka client's security
//	schema.registry.schema.compatibility.level     the default level (BACKWARD)
//	schema.registry.ssl.*                          HTTPS (with listeners=https://…)
//	schema.registry.auth.basic.users.file, schema.registry.auth.bearer.*   REST authentication
//
// The registry is also the node's schema validator (SetSchemaValidator)
// for topics with confluent.value.schema.validation=true or
// confluent.key.schema.validation=true; without it such topics refuse
// every produce.

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/strata-streaming/strata/broker"
	"github.com/strata-streaming/strata/registry"
)

// The node's registry validates the records of topics with
// confluent.value.schema.validation / confluent.key.schema.validation on.
var _ broker.SchemaValidator = (*registry.Registry)(nil)

// It also gives the typed Iceberg modes their schemas.
var _ broker.IcebergSchemaRegistry = (*registry.Registry)(nil)

const schemaRegistryPrefix = "schema.registry."

func init() {
	serverAddons = append(serverAddons, serverAddon{
		name:   "schema registry",
		prefix: schemaRegistryPrefix,
		start:  startSchemaRegistryAddon,
	})
}

// schemaRegistryConfig reads the schema.registry.* settings; enabled is
// false when the registry is not asked for.
func schemaRegistryConfig(env addonEnv) (cfg registry.Config, enabled bool, err error) {
	props := map[string]string{}
	for k, v := range env.Sets {
		key := strings.TrimPrefix(k, schemaRegistryPrefix)
		if key == "enable" {
			if enabled, err = strconv.ParseBool(v); err != nil {
				return cfg, false, fmt.Errorf("%senable=%q: want true or false", schemaRegistryPrefix, v)
			}
			continue
		}
		props[key] = v
	}
	if !enabled {
		return cfg, false, nil
	}
	// By default the registry uses this node's PLAINTEXT listener; a node
	// without one names a secured listener and how to log in to it.
	if props["bootstrap.servers"] == "" && props["kafkastore.bootstrap.servers"] == "" {
		if env.Brokers == "" {
			return cfg, true, errors.New(schemaRegistryPrefix + "enable: this node has no PLAINTEXT listener: set " + schemaRegistryPrefix +
				"bootstrap.servers to one of its listeners and the registry's client security (" + schemaRegistryPrefix + "kafkastore.security.protocol, " +
				schemaRegistryPrefix + "kafkastore.sasl.mechanism, " + schemaRegistryPrefix + "kafkastore.sasl.jaas.config, " + schemaRegistryPrefix + "kafkastore.ssl.*)")
		}
		props["bootstrap.servers"] = env.Brokers
	}
	cfg, err = registry.NewConfig(props)
	if err != nil {
		return cfg, true, fmt.Errorf("%s* settings: %w", schemaRegistryPrefix, err)
	}
	cfg.Logger = env.Logger
	return cfg, true, nil
}

// startSchemaRegistryAddon runs the registry when schema.registry.enable=true.
func startSchemaRegistryAddon(ctx context.Context, env addonEnv) (func() error, error) {
	cfg, enabled, err := schemaRegistryConfig(env)
	if err != nil || !enabled {
		return nil, err
	}
	r, err := registry.New(cfg)
	if err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if err := r.Start(startCtx); err != nil {
		return nil, err
	}
	scheme := "http"
	if r.TLS() {
		scheme = "https"
	}
	env.Logger.Info("schema registry serving", "url", scheme+"://"+r.Addr(), "topic", cfg.Topic)
	if env.Server == nil {
		return r.Close, nil
	}
	env.Server.SetSchemaValidator(r)
	return func() error {
		env.Server.SetSchemaValidator(nil)
		return r.Close()
	}, nil
}
