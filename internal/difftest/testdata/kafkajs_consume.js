// Reads partition 0 of a topic with a real kafkajs consumer (its default
// read_committed) from an offset and prints every delivered record's
// offset, one per line, then exits once nothing has been delivered or
// processed for the idle time. Used by the differential tests in
// clients_test.go: node kafkajs_consume.js BROKER TOPIC FROM MAXBYTES MODE IDLE_MS
// (MODE: eachMessage or eachBatch). kafkajs is found through NODE_PATH.
"use strict";
const { Kafka, logLevel } = require("kafkajs");

const [broker, topic, from, maxBytes, mode, idleMs] = process.argv.slice(2);
const kafka = new Kafka({ clientId: "txnscope-difftest", brokers: [broker], logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({
  groupId: "txnscope-" + topic + "-" + process.pid + "-" + Date.now(),
  maxBytesPerPartition: Number(maxBytes),
  maxWaitTimeInMs: 50,
  retry: { retries: 0 },
});
let last = Date.now();
const out = [];
const touch = () => { last = Date.now(); };
let joined = false;
consumer.on(consumer.events.END_BATCH_PROCESS, touch);
consumer.on(consumer.events.GROUP_JOIN, () => { joined = true; touch(); });
consumer.on(consumer.events.CRASH, (e) => { process.stderr.write("crash: " + e.payload.error + "\n"); finish(3); });

let finishing = false;
async function finish(code) {
  if (finishing) return;
  finishing = true;
  process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
  try { await consumer.disconnect(); } catch (e) { /* exiting anyway */ }
  process.exit(code);
}

(async () => {
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  const handler = mode === "eachBatch"
    ? { eachBatch: async ({ batch }) => { for (const m of batch.messages) out.push(m.offset); touch(); } }
    : { eachMessage: async ({ message }) => { out.push(message.offset); touch(); } };
  await consumer.run(handler);
  consumer.seek({ topic, partition: 0, offset: from });
  touch();
  const timer = setInterval(() => {
    if (joined && Date.now() - last > Number(idleMs)) { clearInterval(timer); finish(0); }
  }, 50);
})().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); finish(2); });
