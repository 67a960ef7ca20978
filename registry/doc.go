// Package registry is Strata's schema registry: Confluent's REST API and
// storage layout, so that Confluent's serializers, deserializers and tools
// work unchanged when pointed at it. It is a Kafka client only (franz-go),
// like connect: it keeps everything in one compacted topic and imports
// nothing of the broker, so it runs inside `strata server`
// (schema.registry.enable=true, cmd/strata/schema_registry.go) or against
// any Kafka cluster.
//
// # Storage: the _schemas topic
//
// One partition, cleanup.policy=compact, created when missing with
// replication factor min(3, live brokers) as Confluent's registry creates
// it, or exactly kafkastore.topic.replication.factor when that is set
// (Start then waits until that many brokers are alive, so that a cluster
// still starting does not get a topic with one replica); an existing topic
// with more than one partition or without compaction is refused. Keys and values are JSON in
// Confluent's layout, so Confluent's registry could read the topic:
//
//	offset  key                                                         value
//	------  ----------------------------------------------------------  -----------------------------------------------
//	  n     {"keytype":"SCHEMA","subject":"s","version":1,"magic":1,     {"subject":"s","version":1,"id":7,
//	         "seq":n,"node":"<instance>"}                                "schemaType":"PROTOBUF",   (omitted for AVRO)
//	                                                                     "references":[{"name","subject","version"}],
//	                                                                                                (omitted when none)
//	                                                                     "schema":"…","deleted":false}
//	        {"keytype":"CONFIG","subject":null|"s","magic":0}           {"compatibilityLevel":"FULL"}
//	        {"keytype":"MODE","subject":null|"s","magic":0}             {"mode":"READONLY"}
//	        {"keytype":"DELETE_SUBJECT","subject":"s","magic":0,        {"subject":"s","version":N}
//	         "seq":n,"node":"<instance>"}                               (versions ≤ N are soft-deleted)
//	        {"keytype":"NOOP","magic":0}                                ignored
//	        any key                                                     null: a tombstone
//
// seq and node are Strata's additions (see below); Confluent's reader, like
// Redpanda's, ignores key fields it does not know, and records without them
// — written by another registry — are read as Confluent writes them. A
// tombstone of a SCHEMA key deletes the version for good; of a CONFIG or
// MODE key, clears the setting. A soft delete rewrites the version's
// SCHEMA record with "deleted":true. An id belongs to a schema (text, type
// and references) rather than to a subject: registering a schema that
// exists anywhere reuses its id, as Confluent does, and an id lives while
// some version (soft-deleted ones included) names it.
//
// # Reading
//
// Every registry instance reads the whole topic from offset 0 into an
// in-memory view (view.go, pure: apply one record at its offset) and
// answers every read from it. Start returns once the view has applied
// everything below the end offset it found when starting. Reads of a
// compacted topic move past ranges compaction emptied (kafkaLog.Read uses
// Fetch requests of its own, which show the high watermark; a kgo consumer
// hides empty fetches).
//
// # Writing from any node, with no leader
//
// Any instance accepts writes; there is no leader election and nothing is
// forwarded. Each instance has one writer goroutine, to which REST handlers
// queue their writes (no lock is held across network I/O). For each write
// it:
//
//  1. reads the topic's end offset E (ListOffsets: the high watermark);
//  2. waits until its view has applied every record below E;
//  3. decides the change against that view (validation, compatibility, the
//     next version = the subject's highest + 1, the id = the one the same
//     schema already has, else the highest id seen + 1), with the view
//     locked but no I/O;
//  4. produces it (idempotent producer, acks=all, partition 0) with
//     "seq":E and "node":<this instance's random id> in the key;
//  5. compares the offset the record got with E. Equal: it won; it waits
//     until its view applied the record and answers. Different: another
//     writer's record took offset E first, so this one lost: it starts over
//     at 1 (at most 10 times, then 50001).
//
// Every reader applies a SCHEMA or DELETE_SUBJECT record carrying seq only
// if seq equals the record's own offset, so of writers racing from the same
// E exactly one counts, and every node agrees which. Because keys carry seq
// and node, two racing writes of one subject/version have different keys,
// and compaction can never let a loser's record replace the winner's. A
// permanent delete writes tombstones for every key variant the view has
// seen for the version. CONFIG and MODE records carry no seq: the last
// written wins, as in Confluent's registry.
//
// The design direction suggested allocating ids through the metadata
// quorum. Sequencing on the topic's offsets gives the same agreement (one
// total order, decided by the partition leader) while the registry stays a
// pure Kafka client that works against any Kafka cluster, and needs no
// primary election as Confluent's registry does.
//
// # REST API
//
// Confluent's paths, bodies and error codes; responses are
// application/vnd.schemaregistry.v1+json; request bodies may be that,
// application/vnd.schemaregistry+json, application/json,
// application/octet-stream or untyped (anything else: 415).
//
//	GET    /                                               {}
//	GET    /schemas/types                                  the configured formats, e.g. ["AVRO"]
//	GET    /schemas?subjectPrefix=&deleted=&latestOnly=    every version, as below
//	GET    /schemas/ids/{id}[?subject=]                    {"schemaType","references","schema"}
//	GET    /schemas/ids/{id}/schema                        the schema's text
//	GET    /schemas/ids/{id}/versions[?deleted=]           [{"subject","version"}]
//	GET    /schemas/ids/{id}/subjects[?deleted=]           ["subject"]
//	GET    /subjects[?deleted=&subjectPrefix=]             ["subject"]
//	GET    /subjects/{s}/versions[?deleted=]               [1,2]
//	GET    /subjects/{s}/versions/{v}[?deleted=]           {"subject","version","id","schemaType","references","schema"}
//	GET    /subjects/{s}/versions/{v}/schema               the text; v is a number, latest or -1
//	GET    /subjects/{s}/versions/{v}/referencedby         [ids of live versions referencing it]
//	POST   /subjects/{s}/versions[?normalize=]             {"schema","schemaType","references"[,"id","version" in IMPORT]} → {"id"}
//	POST   /subjects/{s}[?normalize=&deleted=]             lookup → the version holding the schema
//	DELETE /subjects/{s}[?permanent=]                      → [versions]
//	DELETE /subjects/{s}/versions/{v}[?permanent=]         → version
//	GET|PUT|DELETE /config                                 {"compatibilityLevel"} | {"compatibility"} in and out
//	GET|PUT|DELETE /config/{s}[?defaultToGlobal=]          DELETE answers the old level under both names
//	GET|PUT /mode[?force=]                                 {"mode"}
//	GET|PUT|DELETE /mode/{s}[?defaultToGlobal=&force=]
//	POST   /compatibility/subjects/{s}/versions/{v}[?verbose=&normalize=]  {"is_compatible"[,"messages"]}
//	POST   /compatibility/subjects/{s}/versions[?verbose=&normalize=]      against what the level asks
//	GET    /contexts                                       ["."]
//
// Registering a schema a live version of the subject already holds answers
// its id without a new version. Otherwise the schema must be compatible at
// the subject's level (its own, else the global one, else
// schema.compatibility.level, BACKWARD by default): BACKWARD (the new
// schema reads data of the latest version), FORWARD (the latest reads the
// new one's), FULL (both), their _TRANSITIVE forms (against every live
// version; soft-deleted ones are skipped) or NONE. A refusal is 409 with
// error_code 409 and every reason, naming the version and the field.
// normalize=true stores and compares the format's normalized text.
// References resolve to subject/version in the view, recursively (cycles
// and missing versions are 42201); version -1 in a reference is the
// latest, stored as its number.
//
// Deletes: soft, then permanent (permanent first is 40405/40407; soft
// twice is 40404/40406); a version a live schema references cannot be
// soft-deleted, nor one any schema references permanently deleted (42206).
// Modes: READONLY and READONLY_OVERRIDE refuse registrations and deletes
// (42205), a subject's mode wins over the global one; IMPORT skips
// compatibility and takes explicit ids and versions (elsewhere they are
// 42205), and can be set only on an empty registry or subject unless
// force=true.
//
// Errors are {"error_code":N,"message":"…"} with the HTTP status in N's
// first three digits: 40401 subject, 40402 version, 40403 schema not
// found; 40404/40405 subject (not) soft-deleted; 40406/40407 version (not)
// soft-deleted; 40408/40409 no subject-level compatibility/mode; 409
// incompatible; 42201 invalid schema (the parser's message; an unknown
// schema type; a body over 16 MiB, as HTTP 413); 42202 invalid version
// (not latest, -1 or 1…2^31-1); 42203 invalid compatibility level; 42204
// invalid mode; 42205 not permitted; 42206 referenced; 42207 id mismatch
// in IMPORT; 50001 store error; 50002 timeout. As Confluent's REST layer
// does, unreadable JSON is 400 with error_code 400, JSON of the wrong
// shape 422 with error_code 422, an unknown path 404 and a wrong method
// 405 (with JSON bodies too). A panic in a handler is a 500 answer, never
// a crash.
//
// # Formats
//
// Config.Formats holds the schema.Format of each schema type the registry
// accepts (default: Avro, registry/avro); /schemas/types lists them, and a
// schemaType without one is 42201. registry/wire holds Confluent's framing
// of serialized values (magic byte 0, big-endian schema id).
//
// # Record checks for the broker
//
// CheckRecord and RecordName (validate.go) serve the broker's schema
// validation (topic configs confluent.value.schema.validation and
// confluent.key.schema.validation; broker.SchemaValidator, which a
// Registry satisfies without this package importing broker). They answer
// from the view, with no network I/O: a framed key or value (registry/wire)
// passes when its id is a live, not soft-deleted, version of the subject,
// and with decode when its payload also decodes with that schema (Avro
// binary with nothing left over; one JSON value the JSON Schema accepts;
// Protobuf message indexes naming a message, then that message). Refusals
// are *RecordError, matching ErrNotFramed, ErrUnknownSchemaID,
// ErrWrongSubject, ErrUndecodable or ErrNoRecordName. Parsed schemas are
// cached by id (at most 1024), parsed with no lock held. A schema
// registered on another node is known here once this node's reader has
// applied it (usually milliseconds later); until then its records are
// refused as an unknown id.
//
// # Not supported
//
// Schema contexts other than the default "." (/contexts answers ["."],
// context-qualified subjects are ordinary names); metadata, rule sets and
// data contracts (accepted in bodies, ignored); config fields other than
// compatibilityLevel (normalize, alias, compatibilityGroup); pagination
// (offset/limit); schema GUIDs; the exporters and DEK endpoints. As in
// Confluent's registry, an id whose every version was permanently deleted
// may be given again to another schema after the topic was compacted and
// a registry rebuilt its view from it. A Confluent registry reading a topic
// in which Strata writers raced would take a losing record's value for the
// version (it does not know seq).
package registry
