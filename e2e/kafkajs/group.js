#!/usr/bin/env node
// group.js: one kafkajs consumer-group member against a Strata broker, driven
// by e2e/groups_test.go.
//
//   node group.js BROKER TOPIC GROUP [--count N] [--timeout-ms MS]
//
// Joins GROUP, subscribes to TOPIC with fromBeginning: true (partitions the
// group has no committed offset for start at the earliest offset) and prints
// every message it consumes. Offsets are committed by kafkajs's autoCommit
// after each batch, and only for messages this script printed: the batch
// handler resolves offsets itself (eachBatchAutoResolve: false), so a message
// fetched but not printed is not committed either.
//
// It stops, leaving the group through consumer.disconnect() (which waits for
// the batch in hand and its commit), when it has printed N messages (--count)
// or on SIGTERM/SIGINT. Without --count it runs until signalled; --timeout-ms
// (default 30000) bounds the whole run either way.
//
// Output, one JSON object per line on stdout; kafkajs logs go to stderr:
//   {"type":"join","memberId":..,"leader":bool,"assignment":{"topic":[partitions]}}
//   {"type":"message","partition":P,"offset":"O","key":"..","value":".."}
//   {"type":"crash","error":".."}                     (kafkajs restarts the consumer)
//   {"type":"done","reason":"count"|"signal"|"timeout"|"error","count":N,"error":".."}
// Exit status: 0 after "count" or "signal", 1 otherwise, 2 for a usage error.

'use strict'

const { Kafka, logLevel } = require('kafkajs')

function usage (msg) {
  process.stderr.write(`group.js: ${msg}\n` +
    'usage: node group.js BROKER TOPIC GROUP [--count N] [--timeout-ms MS]\n')
  process.exit(2)
}

function parseArgs (argv) {
  const positional = []
  const opts = { count: 0, timeoutMs: 30000 }
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]
    if (arg === '--count') {
      opts.count = parseInt(argv[++i], 10)
      if (!(opts.count > 0)) usage('--count must be a positive integer')
    } else if (arg === '--timeout-ms') {
      opts.timeoutMs = parseInt(argv[++i], 10)
      if (!(opts.timeoutMs > 0)) usage('--timeout-ms must be a positive integer')
    } else if (arg.startsWith('--')) {
      usage(`unknown flag ${arg}`)
    } else {
      positional.push(arg)
    }
  }
  if (positional.length !== 3) usage('want BROKER TOPIC GROUP')
  const [broker, topic, group] = positional
  return { broker, topic, group, ...opts }
}

// kafkajs's default logger writes info lines to stdout; keep stdout for our lines.
const stderrLogCreator = () => ({ namespace, level, label, log }) => {
  const { message, ...extra } = log
  process.stderr.write(`kafkajs ${label} [${namespace}] ${message} ${JSON.stringify(extra)}\n`)
}

// Writes to a pipe are synchronous on Linux, so nothing printed is lost at exit.
function emit (obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

const text = buf => (buf === null ? null : buf.toString())

async function main () {
  const args = parseArgs(process.argv.slice(2))
  const kafka = new Kafka({
    clientId: 'strata-e2e-group',
    brokers: [args.broker],
    connectionTimeout: 3000,
    requestTimeout: 10000,
    retry: { retries: 5, initialRetryTime: 200 },
    logLevel: logLevel.WARN,
    logCreator: stderrLogCreator
  })
  const consumer = kafka.consumer({
    groupId: args.group,
    sessionTimeout: 10000,
    rebalanceTimeout: 10000,
    heartbeatInterval: 500,
    maxWaitTimeInMs: 200
  })

  let printed = 0
  let stopping = false
  let finish
  const finished = new Promise(resolve => { finish = resolve })
  const stop = (reason, error) => {
    if (stopping) return
    stopping = true
    finish({ reason, error })
  }

  consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => {
    emit({ type: 'join', memberId: payload.memberId, leader: payload.isLeader, assignment: payload.memberAssignment })
  })
  consumer.on(consumer.events.CRASH, ({ payload }) => {
    emit({ type: 'crash', error: `${payload.error && payload.error.name}: ${payload.error && payload.error.message}`, restart: payload.restart })
    if (!payload.restart) stop('error', `consumer crashed: ${payload.error && payload.error.message}`)
  })
  process.on('SIGTERM', () => stop('signal'))
  process.on('SIGINT', () => stop('signal'))
  const timer = setTimeout(() => stop('timeout', `printed ${printed} messages in ${args.timeoutMs} ms`), args.timeoutMs)

  try {
    await consumer.connect()
    await consumer.subscribe({ topics: [args.topic], fromBeginning: true })
    await consumer.run({
      autoCommit: true,
      eachBatchAutoResolve: false,
      eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
        for (const message of batch.messages) {
          if (stopping || !isRunning() || isStale()) break
          emit({ type: 'message', partition: batch.partition, offset: message.offset, key: text(message.key), value: text(message.value) })
          resolveOffset(message.offset)
          printed++
          if (args.count > 0 && printed >= args.count) {
            stop('count')
            break
          }
        }
        await heartbeat()
      }
    })
  } catch (err) {
    stop('error', `${err.name || 'Error'}: ${err.message}`)
  }

  const { reason, error } = await finished
  clearTimeout(timer)
  let disconnectError
  try {
    // Waits for the batch in hand, commits what it resolved, leaves the group.
    await consumer.disconnect()
  } catch (err) {
    disconnectError = `${err.name || 'Error'}: ${err.message}`
  }
  const ok = (reason === 'count' || reason === 'signal') && !disconnectError
  emit({ type: 'done', reason, count: printed, error: error || disconnectError })
  process.exit(ok ? 0 : 1)
}

main().catch(err => {
  emit({ type: 'done', reason: 'error', error: `${err.name || 'Error'}: ${err.message}` })
  process.exit(1)
})
