// Produce and consume over SASL_SSL with kafkajs's own SASL and TLS.
// usage: node sasl.js BROKER CA_FILE MECHANISM USER PASSWORD TOPIC COUNT
// For MECHANISM oauthbearer, PASSWORD is the bearer token (USER unused).
// Prints one JSON line: {"ok":true,"consumed":N} or {"ok":false,"error":…,"type":…}.
'use strict';
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');

const [broker, caFile, mechanism, username, password, topic, countArg] = process.argv.slice(2);
const count = parseInt(countArg, 10);

async function main() {
  const kafka = new Kafka({
    clientId: 'strata-e2e-sasl',
    brokers: [broker],
    ssl: { ca: [fs.readFileSync(caFile, 'utf8')] },
    sasl: mechanism === 'oauthbearer'
      ? { mechanism, oauthBearerProvider: async () => ({ value: password }) }
      : { mechanism, username, password },
    logLevel: logLevel.NOTHING,
    retry: { retries: 2 },
    connectionTimeout: 5000,
  });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1 }] });
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  const messages = [];
  for (let i = 0; i < count; i++) messages.push({ key: `k${i}`, value: `v${i}` });
  await producer.send({ topic, messages });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: `g-${topic}` });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let consumed = 0;
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`consumed ${consumed} of ${count}`)), 30000);
    consumer.run({
      eachMessage: async ({ message }) => {
        if (message.value.toString() === `v${consumed}`) consumed++;
        if (consumed === count) { clearTimeout(timer); resolve(); }
      },
    }).catch(reject);
  });
  await consumer.disconnect();
  return consumed;
}

main().then(
  (consumed) => { console.log(JSON.stringify({ ok: true, consumed })); process.exit(0); },
  (err) => { console.log(JSON.stringify({ ok: false, error: String(err && err.message), type: err && err.name })); process.exit(1); },
);
