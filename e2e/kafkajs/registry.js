#!/usr/bin/env node
// registry.js: @kafkajs/confluent-schema-registry and kafkajs against a
// Strata node serving its schema registry, driven by
// e2e/schema_registry_test.go.
//
//   node registry.js BROKER REGISTRY_URL TOPIC_PREFIX
//
// For each schema type (AVRO, JSON, PROTOBUF) it registers a schema under
// <topic>-value, evolves it with a compatible change (a new id), checks
// that an incompatible change is refused with HTTP 409, encodes COUNT
// records with the evolved schema (Confluent's wire format: magic byte,
// schema id, payload; Protobuf with its message indexes), produces them
// with kafkajs, consumes them with a kafkajs consumer group and decodes
// them with a second SchemaRegistry client whose cache is empty, so that
// every schema is fetched by id from the registry.
//
// Output: one JSON summary line on stdout; logs go to stderr.
// Exit status: 0 when every check passed, 1 otherwise (the summary says which).

'use strict'

process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1'

const { Kafka, logLevel } = require('kafkajs')
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry')

const COUNT = 20
const READ_TIMEOUT_MS = 30000

const [broker, registryURL, prefix] = process.argv.slice(2)
if (!broker || !registryURL || !prefix) {
  process.stderr.write('usage: node registry.js BROKER REGISTRY_URL TOPIC_PREFIX\n')
  process.exit(2)
}

// Each case: the first schema, a compatible evolution (a field added with
// a default, or optional), an incompatible one (a field's type changed),
// and the record for index i under the evolved schema.
const cases = [
  {
    type: SchemaType.AVRO,
    v1: JSON.stringify({ type: 'record', name: 'Order', namespace: 'strata.e2e', fields: [{ name: 'id', type: 'long' }, { name: 'item', type: 'string' }] }),
    v2: JSON.stringify({ type: 'record', name: 'Order', namespace: 'strata.e2e', fields: [{ name: 'id', type: 'long' }, { name: 'item', type: 'string' }, { name: 'qty', type: 'int', default: 1 }] }),
    bad: JSON.stringify({ type: 'record', name: 'Order', namespace: 'strata.e2e', fields: [{ name: 'id', type: 'string' }, { name: 'item', type: 'string' }, { name: 'qty', type: 'int', default: 1 }] }),
    record: (i) => ({ id: i, item: `item-${i}`, qty: i % 7 })
  },
  {
    type: SchemaType.JSON,
    // A closed content model: adding an optional property is then
    // BACKWARD compatible (Confluent's rule; with an open model the old
    // writer may have written any "qty").
    v1: JSON.stringify({ type: 'object', properties: { id: { type: 'integer' }, item: { type: 'string' } }, required: ['id'], additionalProperties: false }),
    v2: JSON.stringify({ type: 'object', properties: { id: { type: 'integer' }, item: { type: 'string' }, qty: { type: 'integer' } }, required: ['id'], additionalProperties: false }),
    bad: JSON.stringify({ type: 'object', properties: { id: { type: 'string' }, item: { type: 'string' }, qty: { type: 'integer' } }, required: ['id'], additionalProperties: false }),
    record: (i) => ({ id: i, item: `item-${i}`, qty: i % 7 })
  },
  {
    type: SchemaType.PROTOBUF,
    v1: 'syntax = "proto3";\npackage strata.e2e;\nmessage Order {\n  int64 id = 1;\n  string item = 2;\n}\n',
    v2: 'syntax = "proto3";\npackage strata.e2e;\nmessage Order {\n  int64 id = 1;\n  string item = 2;\n  int32 qty = 3;\n}\n',
    bad: 'syntax = "proto3";\npackage strata.e2e;\nmessage Order {\n  string id = 1;\n  string item = 2;\n  int32 qty = 3;\n}\n',
    record: (i) => ({ id: i, item: `item-${i}`, qty: i % 7 })
  }
]

const summary = { ok: false, types: {}, failures: [] }

function fail (msg) {
  summary.failures.push(msg)
}

function same (a, b) {
  // Protobuf decodes int64 as a Long or number and drops zero values:
  // compare field by field, as numbers and strings.
  for (const k of Object.keys(a)) {
    const av = a[k]
    const bv = b[k] === undefined ? (typeof av === 'number' ? 0 : '') : b[k]
    if (String(av) !== String(bv)) return false
  }
  return true
}

async function runCase (kafka, c) {
  const topic = `${prefix}-${c.type.toLowerCase()}`
  const subject = `${topic}-value`
  const out = { topic }
  summary.types[c.type] = out
  const writer = new SchemaRegistry({ host: registryURL })
  const { id: id1 } = await writer.register({ type: c.type, schema: c.v1 }, { subject })
  const { id: id2 } = await writer.register({ type: c.type, schema: c.v2 }, { subject })
  out.ids = [id1, id2]
  if (!(id1 > 0) || !(id2 > 0) || id1 === id2) fail(`${c.type}: ids ${id1}, ${id2}: want two different positive ids`)
  // Registering the same schema again answers the same id.
  const { id: again } = await writer.register({ type: c.type, schema: c.v2 }, { subject })
  if (again !== id2) fail(`${c.type}: registering v2 again gave id ${again}, want ${id2}`)
  const latest = await writer.getLatestSchemaId(subject)
  if (latest !== id2) fail(`${c.type}: latest id ${latest}, want ${id2}`)
  const byVersion = await writer.getRegistryId(subject, 1)
  if (byVersion !== id1) fail(`${c.type}: version 1 has id ${byVersion}, want ${id1}`)
  try {
    await writer.register({ type: c.type, schema: c.bad }, { subject })
    fail(`${c.type}: an incompatible schema was registered`)
  } catch (e) {
    out.incompatible = { status: e.status, message: String(e.message).slice(0, 200) }
    if (e.status !== 409) fail(`${c.type}: incompatible schema: status ${e.status} (${e.message}), want 409`)
  }

  const admin = kafka.admin()
  await admin.connect()
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true })
  await admin.disconnect()

  const producer = kafka.producer()
  await producer.connect()
  const messages = []
  for (let i = 0; i < COUNT; i++) {
    messages.push({ key: `k-${i}`, value: await writer.encode(id2, c.record(i)) })
  }
  await producer.send({ topic, messages })
  await producer.disconnect()

  const reader = new SchemaRegistry({ host: registryURL }) // empty cache: fetches by id
  const consumer = kafka.consumer({ groupId: `${topic}-group` })
  await consumer.connect()
  await consumer.subscribe({ topic, fromBeginning: true })
  const decoded = []
  let decodeError = null
  const done = new Promise((resolve) => {
    consumer.run({
      eachMessage: async ({ message }) => {
        try {
          decoded.push(await reader.decode(message.value))
        } catch (e) {
          decodeError = decodeError || String(e.message)
        }
        if (decoded.length + (decodeError ? 1 : 0) >= COUNT) resolve()
      }
    })
  })
  const timer = new Promise((resolve) => setTimeout(resolve, READ_TIMEOUT_MS))
  await Promise.race([done, timer])
  await consumer.disconnect()
  out.decoded = decoded.length
  if (decodeError) fail(`${c.type}: decode: ${decodeError}`)
  if (decoded.length !== COUNT) fail(`${c.type}: decoded ${decoded.length} records, want ${COUNT}`)
  for (let i = 0; i < decoded.length; i++) {
    if (!same(c.record(i), decoded[i])) {
      fail(`${c.type}: record ${i} decoded as ${JSON.stringify(decoded[i])}, want ${JSON.stringify(c.record(i))}`)
      break
    }
  }
}

async function main () {
  const kafka = new Kafka({ clientId: 'strata-e2e-registry', brokers: [broker], logLevel: logLevel.WARN, retry: { retries: 5 } })
  for (const c of cases) {
    try {
      await runCase(kafka, c)
    } catch (e) {
      fail(`${c.type}: ${e.stack || e}`)
    }
  }
  summary.ok = summary.failures.length === 0
  process.stdout.write(JSON.stringify(summary) + '\n')
  process.exit(summary.ok ? 0 : 1)
}

main()
