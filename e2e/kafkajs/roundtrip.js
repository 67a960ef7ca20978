#!/usr/bin/env node
// roundtrip.js: kafkajs against a Strata broker, driven by e2e/kafkajs_test.go.
//
//   node roundtrip.js BROKER TOPIC COUNT [MODE] [--partitions N] [--group]
//
// MODE
//   roundtrip     (default) create TOPIC, produce COUNT messages, then read them back
//   produce-only  create TOPIC and produce COUNT messages, check offsets with the admin client
//   consume-only  read back COUNT messages that an earlier run produced (e.g. after a restart)
//
// Every message i (0 <= i < COUNT) goes to partition i % N with key "key-<i>",
// value "value-<i>" and header seq=<i>; they are sent in a few batches, one of
// them gzip-compressed. Reading back always uses kafkajs's own Fetch encoding
// and decoding without a consumer group (kafkajs's public consumer cannot run
// without one, so this goes through kafkajs's Cluster/Broker classes). With
// --group, the messages are also read with a kafkajs consumer group
// (FindCoordinator, JoinGroup, SyncGroup, Heartbeat, OffsetCommit, ...).
//
// Output: one JSON summary line on stdout; kafkajs logs go to stderr.
// Exit status: 0 when every check passed, 1 otherwise (the summary says which).

'use strict'

// Messages name their partition explicitly, so the v2 partitioner change
// kafkajs warns about does not apply.
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'

const { Kafka, CompressionTypes, logLevel } = require('kafkajs')
const Cluster = require('kafkajs/src/cluster')
const { createLogger } = require('kafkajs/src/loggers')
const defaultSocketFactory = require('kafkajs/src/network/socketFactory')

const READ_TIMEOUT_MS = 30000

function usage (msg) {
  process.stderr.write(`roundtrip.js: ${msg}\n` +
    'usage: node roundtrip.js BROKER TOPIC COUNT [roundtrip|produce-only|consume-only] [--partitions N] [--group]\n')
  process.exit(2)
}

function parseArgs (argv) {
  const positional = []
  const opts = { partitions: 3, group: false }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--group') {
      opts.group = true
    } else if (arg === '--partitions') {
      opts.partitions = parseInt(argv[++i], 10)
    } else if (arg.startsWith('--')) {
      usage(`unknown flag ${arg}`)
    } else {
      positional.push(arg)
    }
  }
  if (positional.length < 3 || positional.length > 4) usage('want BROKER TOPIC COUNT [MODE]')
  const [broker, topic, countText, mode = 'roundtrip'] = positional
  const count = parseInt(countText, 10)
  if (!(count > 0)) usage(`COUNT must be a positive integer, got ${countText}`)
  if (!(opts.partitions > 0)) usage('--partitions must be a positive integer')
  if (!['roundtrip', 'produce-only', 'consume-only'].includes(mode)) usage(`unknown mode ${mode}`)
  return { broker, topic, count, mode, ...opts }
}

// kafkajs's default logger writes info lines to stdout; keep stdout for the summary.
const stderrLogCreator = () => ({ namespace, level, label, log }) => {
  const { message, ...extra } = log
  process.stderr.write(`kafkajs ${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

function messageFor (i) {
  return { key: `key-${i}`, value: `value-${i}`, headers: { seq: String(i) } }
}

async function createTopic (admin, { topic, partitions }) {
  const created = await admin.createTopics({
    topics: [{ topic, numPartitions: partitions, replicationFactor: 1 }],
    waitForLeaders: true,
    timeout: 10000
  })
  return created
}

// produce sends the messages in five batches of roughly equal size, one per
// send call, every partition's messages in seq order; the third batch is gzip.
async function produce (kafka, { topic, count, partitions }) {
  const producer = kafka.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  const batches = Math.min(5, count)
  const perBatch = Math.ceil(count / batches)
  const acks = []
  try {
    for (let b = 0, start = 0; start < count; b++, start += perBatch) {
      const messages = []
      for (let i = start; i < Math.min(count, start + perBatch); i++) {
        messages.push({ ...messageFor(i), partition: i % partitions })
      }
      const result = await producer.send({
        topic,
        acks: -1,
        timeout: 10000,
        compression: b === 2 ? CompressionTypes.GZIP : CompressionTypes.None,
        messages
      })
      acks.push(...result.map(r => ({ partition: r.partition, errorCode: r.errorCode, baseOffset: r.baseOffset })))
    }
  } finally {
    await producer.disconnect()
  }
  return { batches, acks }
}

async function offsets (admin, topic) {
  const partitions = await admin.fetchTopicOffsets(topic)
  const byPartition = {}
  let total = 0
  for (const p of partitions) {
    byPartition[p.partition] = { low: p.low, high: p.high }
    total += Number(p.high) - Number(p.low)
  }
  return { byPartition, total }
}

// fetchWithoutGroup reads every partition from offset 0 up to its high
// watermark with kafkajs's Fetch request, as a group-less consumer would.
async function fetchWithoutGroup ({ broker, topic }, highByPartition) {
  const logger = createLogger({ level: logLevel.WARN, logCreator: stderrLogCreator })
  const cluster = new Cluster({
    logger,
    socketFactory: defaultSocketFactory(),
    brokers: [broker],
    clientId: 'strata-e2e-fetch',
    connectionTimeout: 3000,
    requestTimeout: 10000,
    enforceRequestTimeout: true,
    metadataMaxAge: 300000,
    allowAutoTopicCreation: false,
    retry: { retries: 3 }
  })
  await cluster.connect()
  const records = []
  try {
    await cluster.addTargetTopic(topic)
    const deadline = Date.now() + READ_TIMEOUT_MS
    for (const meta of cluster.findTopicPartitionMetadata(topic)) {
      const partition = meta.partitionId
      const high = BigInt(highByPartition[partition] ?? '0')
      const leader = await cluster.findBroker({ nodeId: String(meta.leader) })
      let next = 0n
      while (next < high) {
        const before = next
        if (Date.now() > deadline) throw new Error(`fetch ${topic}/${partition}: stuck at offset ${next} of ${high}`)
        const response = await leader.fetch({
          replicaId: -1,
          isolationLevel: 1,
          maxWaitTime: 200,
          minBytes: 1,
          maxBytes: 4 << 20,
          topics: [{ topic, partitions: [{ partition, fetchOffset: next.toString(), maxBytes: 1 << 20 }] }]
        })
        for (const topicResponse of response.responses) {
          for (const p of topicResponse.partitions) {
            if (p.errorCode !== 0) throw new Error(`fetch ${topic}/${p.partition} at ${next}: error code ${p.errorCode}`)
            for (const m of p.messages) {
              // A fetch may start inside a batch: skip what is below the asked offset.
              if (p.partition !== partition || BigInt(m.offset) < next) continue
              records.push({ partition: p.partition, offset: m.offset, key: m.key, value: m.value, headers: m.headers })
              next = BigInt(m.offset) + 1n
            }
          }
        }
        if (next === before) await new Promise(resolve => setTimeout(resolve, 50))
      }
    }
  } finally {
    await cluster.disconnect()
  }
  return records
}

// consumeWithGroup reads the topic from the beginning with a kafkajs consumer group.
async function consumeWithGroup (kafka, { topic, count }) {
  const groupId = `strata-e2e-${topic}-${process.pid}`
  const consumer = kafka.consumer({ groupId, sessionTimeout: 10000, heartbeatInterval: 1000, maxWaitTimeInMs: 200 })
  const records = []
  await consumer.connect()
  try {
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`group consume: got ${records.length} of ${count} messages in ${READ_TIMEOUT_MS} ms`)), READ_TIMEOUT_MS)
      consumer.run({
        eachMessage: async ({ partition, message }) => {
          records.push({ partition, offset: message.offset, key: message.key, value: message.value, headers: message.headers })
          if (records.length >= count) {
            clearTimeout(timer)
            resolve()
          }
        }
      }).catch(err => {
        clearTimeout(timer)
        reject(err)
      })
    })
  } finally {
    await consumer.disconnect()
  }
  return { groupId, records }
}

// check verifies that records hold exactly messages 0..count-1, each on its
// partition, in order, at contiguous offsets, with key, value and header intact.
function check (records, { count, partitions }) {
  const problems = []
  const perPartition = {}
  const seen = new Set()
  let first = null
  let last = null
  for (const r of records) {
    const value = r.value === null ? null : r.value.toString()
    const key = r.key === null ? null : r.key.toString()
    const seqHeader = r.headers && r.headers.seq
    const seq = seqHeader === undefined ? NaN : parseInt(seqHeader.toString(), 10)
    const want = messageFor(seq)
    if (problems.length < 10) {
      if (Number.isNaN(seq)) problems.push(`${r.partition}@${r.offset}: no seq header`)
      else if (key !== want.key || value !== want.value) problems.push(`${r.partition}@${r.offset}: got key=${key} value=${value}, want ${want.key} ${want.value}`)
      else if (seq % partitions !== r.partition) problems.push(`${r.partition}@${r.offset}: seq ${seq} on the wrong partition`)
      else if (seen.has(seq)) problems.push(`${r.partition}@${r.offset}: seq ${seq} duplicated`)
    }
    const state = perPartition[r.partition] || (perPartition[r.partition] = { count: 0, lastSeq: -1, lastOffset: null })
    if (problems.length < 10 && seq <= state.lastSeq) problems.push(`${r.partition}@${r.offset}: seq ${seq} after ${state.lastSeq}`)
    if (problems.length < 10 && state.lastOffset !== null && BigInt(r.offset) !== BigInt(state.lastOffset) + 1n) {
      problems.push(`${r.partition}@${r.offset}: offset after ${state.lastOffset} is not contiguous`)
    }
    state.count++
    state.lastSeq = seq
    state.lastOffset = r.offset
    seen.add(seq)
    if (first === null || seq < first.seq) first = { seq, value }
    if (last === null || seq > last.seq) last = { seq, value }
  }
  if (records.length !== count) problems.push(`read ${records.length} messages, want ${count}`)
  const counts = {}
  for (const [p, s] of Object.entries(perPartition)) counts[p] = s.count
  return {
    count: records.length,
    first: first && first.value,
    last: last && last.value,
    perPartition: counts,
    inOrder: problems.length === 0,
    problems
  }
}

async function main () {
  const args = parseArgs(process.argv.slice(2))
  const kafka = new Kafka({
    clientId: 'strata-e2e-kafkajs',
    brokers: [args.broker],
    connectionTimeout: 3000,
    requestTimeout: 10000,
    retry: { retries: 3, initialRetryTime: 200 },
    logLevel: logLevel.WARN,
    logCreator: stderrLogCreator
  })
  const summary = { mode: args.mode, topic: args.topic, partitions: args.partitions, ok: false }
  const admin = kafka.admin()
  await admin.connect()
  try {
    if (args.mode !== 'consume-only') {
      summary.created = await createTopic(admin, args)
      const produced = await produce(kafka, args)
      summary.produced = args.count
      summary.batches = produced.batches
      summary.produceErrors = produced.acks.filter(a => a.errorCode !== 0)
    }
    const metadata = await admin.fetchTopicMetadata({ topics: [args.topic] })
    summary.metadataPartitions = metadata.topics[0].partitions.length
    const offs = await offsets(admin, args.topic)
    summary.offsets = offs.byPartition
    summary.offsetsTotal = offs.total

    const highs = {}
    for (const [p, o] of Object.entries(offs.byPartition)) highs[p] = o.high
    if (args.mode !== 'produce-only') {
      summary.fetch = check(await fetchWithoutGroup(args, highs), args)
      if (args.group) {
        const { groupId, records } = await consumeWithGroup(kafka, args)
        summary.group = { groupId, ...check(records, args) }
      }
    }
    summary.ok = summary.metadataPartitions === args.partitions &&
      summary.offsetsTotal === args.count &&
      (summary.produceErrors === undefined || summary.produceErrors.length === 0) &&
      (summary.fetch === undefined || summary.fetch.inOrder) &&
      (summary.group === undefined || summary.group.inOrder)
  } catch (err) {
    summary.error = `${err.name || 'Error'}: ${err.message}`
  } finally {
    await admin.disconnect().catch(() => {})
  }
  process.stdout.write(JSON.stringify(summary) + '\n')
  process.exit(summary.ok ? 0 : 1)
}

main().catch(err => {
  process.stdout.write(JSON.stringify({ ok: false, error: `${err.name || 'Error'}: ${err.message}` }) + '\n')
  process.exit(1)
})
