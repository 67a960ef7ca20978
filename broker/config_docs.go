package broker

// configDocs is the documentation DescribeConfigs v3+ returns when the
// request asks for it (include_documentation): one sentence per topic
// config and broker property, in Strata's words. A broker property that is
// a topic config's synonym without its own entry gets the topic config's
// sentence, as the cluster-wide default.
var configDocs = map[string]string{
	// Topic configs.
	valueSchemaValidationConfig:               "Refuse records whose value is not framed (magic byte 0, schema id) with an id the node's schema registry holds for the value's subject (needs schema.registry.enable=true).",
	keySchemaValidationConfig:                 "Refuse records whose key is not framed (magic byte 0, schema id) with an id the node's schema registry holds for the key's subject (needs schema.registry.enable=true).",
	valueSubjectStrategyConfig:                "How the subject of a value is named for schema validation: TopicNameStrategy (<topic>-value), RecordNameStrategy (the schema's record name) or TopicRecordNameStrategy (<topic>-<record name>).",
	keySubjectStrategyConfig:                  "How the subject of a key is named for schema validation: TopicNameStrategy (<topic>-key), RecordNameStrategy (the schema's record name) or TopicRecordNameStrategy (<topic>-<record name>).",
	schemaValidationModeConfig:                "What schema validation checks: id (the schema id is a live version of the subject) or decode (also that the payload decodes with that schema).",
	"leader.replication.throttled.replicas":   "Replicas whose replication the leader throttles to leader.replication.throttled.rate: partition:broker entries, or * for all (replicas being added by a reassignment are throttled anyway).",
	"follower.replication.throttled.replicas": "Replicas whose fetching the follower throttles to follower.replication.throttled.rate: partition:broker entries, or * for all (replicas being added by a reassignment are throttled anyway).",
	"cleanup.policy":                          "What happens to old segments: delete removes them by retention.ms/retention.bytes, compact keeps the latest record of each key; both may be listed.",
	"compression.type":                        "The codec batches are stored in: producer keeps the producer's; uncompressed, gzip, snappy, lz4 or zstd make the broker recompress batches in other codecs.",
	"compression.gzip.level":                  "gzip level used when compression.type is gzip (1-9, -1 for the codec's default).",
	"compression.lz4.level":                   "lz4 level used when compression.type is lz4 (1-17).",
	"compression.zstd.level":                  "zstd level used when compression.type is zstd (-131072 to 22).",
	"delete.retention.ms":                     "How long a compacted topic keeps a tombstone after the cleaner first sees it, so slow consumers still observe the delete.",
	"file.delete.delay.ms":                    "How long a deleted segment's open files stay readable before they are closed.",
	"flush.messages":                          "Force an fsync after this many appended records (durability normally comes from replication).",
	"flush.ms":                                "Force an fsync when unflushed data is older than this.",
	"index.interval.bytes":                    "Bytes of log between two entries of the sparse offset and time indexes.",
	"local.retention.bytes":                   "For tiered topics, the most bytes kept on local disk once uploaded (-2: retention.bytes).",
	"local.retention.ms":                      "For tiered topics, how long uploaded segments stay on local disk (-2: retention.ms).",
	"max.compaction.lag.ms":                   "The longest a record may stay uncompacted in a compacted topic.",
	"max.message.bytes":                       "The largest record batch a producer may send to the topic, after compression.",
	"message.timestamp.type":                  "CreateTime keeps the producer's timestamps; LogAppendTime stamps records with the broker's clock.",
	"message.timestamp.after.max.ms":          "How far in the future a CreateTime record's timestamp may lie; later records are refused with INVALID_TIMESTAMP.",
	"message.timestamp.before.max.ms":         "How far in the past a CreateTime record's timestamp may lie; older records are refused with INVALID_TIMESTAMP.",
	"min.cleanable.dirty.ratio":               "The share of uncompacted bytes in a compacted log above which the cleaner runs.",
	"min.compaction.lag.ms":                   "The shortest time a record stays uncompacted.",
	"min.insync.replicas":                     "With acks=all, the fewest in-sync replicas that must have a batch for it to be acknowledged.",
	"preallocate":                             "Accepted for compatibility; segments are not preallocated.",
	"remote.storage.enable":                   "Move sealed segments to the object store and read them back from there (tiered storage).",
	"retention.bytes":                         "The most bytes a partition keeps (remote included for tiered topics) before old segments go; -1 for no limit.",
	"retention.ms":                            "How long records are kept before their segment is deleted; -1 for ever.",
	"segment.bytes":                           "The size at which the active segment is rolled.",
	"segment.index.bytes":                     "The largest offset index of one segment; a full index rolls the segment.",
	"segment.jitter.ms":                       "Random jitter subtracted from segment.ms so partitions do not roll together.",
	"segment.ms":                              "The age at which the active segment is rolled even if not full.",
	"unclean.leader.election.enable":          "Allow a replica outside the ISR to become leader when no ISR member is alive, at the risk of losing records.",

	// Broker properties.
	"connections.max.reauth.ms":                    "The longest a SASL session lasts before the client must re-authenticate on its connection (KIP-368); 0 for no limit.",
	"controller.listener.names":                    "The listener name of the raft port (--controller-listen), for its protocol in listener.security.protocol.map (PLAINTEXT or SSL, which is mutual TLS) and its listener.name.<name>.ssl.* settings.",
	"quota.window.num":                             "How many samples client quota usage is measured over.",
	"quota.window.size.seconds":                    "The length of one sample of client quota usage.",
	"connection.failed.authentication.delay.ms":    "How long a failed SASL authentication waits before its answer and the connection's close, to slow down password guessing.",
	"authorizer.class.name":                        "Turns authorization by ACLs on: strata, or Kafka's org.apache.kafka.metadata.authorizer.StandardAuthorizer or kafka.security.authorizer.AclAuthorizer (the same authorizer); empty (the default) authorizes every request.",
	"super.users":                                  "Principals, separated by ';' (User:admin;User:broker), that every ACL check allows; the inter-broker principal must be one of them.",
	"allow.everyone.if.no.acl.found":               "Whether a resource with no ACL at all is open to everyone; false (the default) denies it.",
	"listeners":                                    "The Kafka listeners as NAME://host:port,…; each name's security protocol comes from listener.security.protocol.map (--listen is the one-listener PLAINTEXT shorthand).",
	"advertised.listeners":                         "The addresses clients are told for each listener, NAME://host:port,…; a listener not named advertises its bound address.",
	"listener.security.protocol.map":               "Each listener's security protocol as NAME:PROTOCOL,… (PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL); by default a listener named after a protocol uses it.",
	"inter.broker.listener.name":                   "The listener other nodes' replica fetchers and transaction-marker clients connect to (default: PLAINTEXT, else the first listener).",
	"node.id":                                      "This node's id in the cluster.",
	"broker.id":                                    "Alias of node.id.",
	"log.dirs":                                     "The directories holding the partition logs, comma-separated (JBOD): a new partition goes to the online one with the fewest partitions. The metadata quorum's log, the default object store and the remote-read cache live in the first.",
	"log.dir":                                      "Alias of log.dirs.",
	"controller.quorum.voters":                     "The metadata quorum's voters as id@host:port,…; empty runs a one-voter quorum of this node.",
	"process.roles":                                "broker, controller, or both.",
	"broker.rack":                                  "This node's rack, used to spread replicas.",
	"leader.replication.throttled.rate":            "Bytes per second a leader sends to throttled follower replicas (replicas being added by a reassignment, or listed in a topic's leader.replication.throttled.replicas).",
	"follower.replication.throttled.rate":          "Bytes per second a follower fetches for its throttled replicas (being added by a reassignment, or listed in follower.replication.throttled.replicas).",
	"replica.selector.class":                       "How a partition's leader picks the replica a consumer reads from (KIP-392): empty or org.apache.kafka.common.replica.LeaderSelector for the leader, org.apache.kafka.common.replica.RackAwareReplicaSelector for an in-sync replica in the consumer's client.rack.",
	"strata.balancer.enable":                       "Whether the active controller moves replicas and preferred leaders to keep the cluster balanced (racks, replica and leader counts, local disk, network in and out), and drains decommissioned and long-dead nodes.",
	"strata.balancer.interval.ms":                  "How often the balancer plans, on the active controller.",
	"strata.balancer.max.concurrent.moves":         "The most partition reassignments in flight the balancer lets run (its own and others).",
	"strata.balancer.dead.node.timeout.ms":         "How long a fenced node may stay away before the balancer re-creates its replicas on other nodes (0: never).",
	"strata.balancer.disk.threshold.percent":       "How far above the mean local bytes a node may hold before the balancer moves replicas off it.",
	"strata.balancer.decommission.nodes":           "Nodes being decommissioned: the balancer drains every replica and leadership off them (strata cluster decommission).",
	"broker.heartbeat.interval.ms":                 "How often this broker heartbeats to the metadata quorum.",
	"broker.session.timeout.ms":                    "How long a broker may miss heartbeats before it is fenced.",
	"replica.lag.time.max.ms":                      "How long a follower may fall behind before it leaves the ISR.",
	"replica.fetch.wait.max.ms":                    "How long a follower's fetch waits for new records at the leader.",
	"replica.fetch.response.max.bytes":             "The most bytes a follower asks for in one fetch.",
	"controlled.shutdown.enable":                   "Move leaderships to other replicas before this node stops.",
	"auto.leader.rebalance.enable":                 "Move leadership back to the preferred replicas periodically.",
	"leader.imbalance.check.interval.seconds":      "How often preferred leaders are checked.",
	"offsets.topic.replication.factor":             "Replicas of __consumer_offsets, capped by the controllers configured.",
	"transaction.state.log.replication.factor":     "Replicas of __transaction_state, capped by the controllers configured.",
	"auto.create.topics.enable":                    "Create a topic when a client's Metadata request asks for an unknown one.",
	"delete.topic.enable":                          "Allow DeleteTopics.",
	"num.partitions":                               "Partitions of a topic created without a count.",
	"message.max.bytes":                            "The largest record batch a producer may send (topic default of max.message.bytes).",
	"socket.request.max.bytes":                     "The largest request accepted on a connection.",
	"default.replication.factor":                   "Replicas of a topic created without a replication factor.",
	"log.roll.ms":                                  "Topic default of segment.ms.",
	"log.roll.hours":                               "Topic default of segment.ms, in hours.",
	"log.retention.minutes":                        "Topic default of retention.ms, in minutes.",
	"log.retention.hours":                          "Topic default of retention.ms, in hours.",
	"log.retention.check.interval.ms":              "How often retention is applied.",
	"log.flush.scheduler.interval.ms":              "How often flush.ms and segment.ms are checked.",
	"log.flush.offset.checkpoint.interval.ms":      "How often each log's recovery checkpoint is written.",
	"log.cleaner.backoff.ms":                       "How often compacted logs are checked for cleaning.",
	"transaction.state.log.num.partitions":         "Partitions of __transaction_state.",
	"transaction.max.timeout.ms":                   "The longest transaction timeout a producer may ask for.",
	"transactional.id.expiration.ms":               "How long an idle transactional id is remembered.",
	"remote.log.manager.task.interval.ms":          "How often tiered partitions upload sealed segments and apply remote retention.",
	"remote.log.manager.thread.pool.size":          "Tiered partitions worked on at once.",
	"remote.log.manager.task.retry.backoff.ms":     "First wait after a failed upload.",
	"remote.log.manager.task.retry.backoff.max.ms": "Longest wait after failed uploads.",
	"remote.log.reader.threads":                    "Remote reads running at once.",
	"remote.log.cache.size.bytes":                  "Size of the on-disk cache of remote segment chunks.",
	"remote.log.cache.chunk.size.bytes":            "Size of one cached remote chunk.",
	"strata.remote.log.upload.on.roll":             "Upload a tiered partition's segment as soon as it is sealed (and run local retention right after), instead of at the next remote.log.manager.task.interval.ms.",
	"remote.log.cache.read.ahead.chunks":           "Chunks prefetched for sequential remote readers.",
	"offsets.topic.num.partitions":                 "Partitions of __consumer_offsets.",
	"offsets.topic.segment.bytes":                  "segment.bytes of __consumer_offsets.",
	"offsets.retention.minutes":                    "How long committed offsets of an empty group are kept.",
	"offsets.retention.check.interval.ms":          "How often expired offsets are removed.",
	"offset.metadata.max.bytes":                    "The longest metadata string of a committed offset.",
	"group.initial.rebalance.delay.ms":             "How long a new classic group waits for more members before its first rebalance.",
	"group.min.session.timeout.ms":                 "The shortest session timeout a classic member may ask for.",
	"group.max.session.timeout.ms":                 "The longest session timeout a classic member may ask for.",
	"group.max.size":                               "The most members of one group.",
	"group.consumer.protocol.enable":               "Serve the KIP-848 consumer group protocol.",
	"group.consumer.session.timeout.ms":            "Session timeout of KIP-848 consumer group members.",
	"group.consumer.heartbeat.interval.ms":         "Heartbeat interval of KIP-848 consumer group members.",
	"group.consumer.assignors":                     "Server-side assignors of KIP-848 groups, the first the default.",
	"group.consumer.min.session.timeout.ms":        "The smallest consumer.session.timeout.ms a group config may set.",
	"group.consumer.max.session.timeout.ms":        "The largest consumer.session.timeout.ms a group config may set.",
	"group.consumer.min.heartbeat.interval.ms":     "The smallest consumer.heartbeat.interval.ms a group config may set.",
	"group.consumer.max.heartbeat.interval.ms":     "The largest consumer.heartbeat.interval.ms a group config may set.",
}

// configDoc returns the documentation of a topic config or broker
// property, nil when there is none.
func configDoc(name string) *string {
	if d, ok := configDocs[name]; ok {
		return &d
	}
	for topic, def := range topicConfigDefs {
		for _, syn := range def.brokerSynonyms {
			if syn == name {
				d := configDocs[topic] + " (Cluster-wide default of the topic config " + topic + ".)"
				return &d
			}
		}
	}
	return nil
}
