// Reads partition 0 of a topic with a real kafkajs consumer (its default
// read_committed) from an offset and prints every delivered record's
// offset, one per line, then exits: a short while after it delivered the
// offset LAST (the one the test expects last; -1 for none), else once
// nothing has been delivered or processed for IDLE_MS. Used by the
// differential tests in clients_test.go:
// node kafkajs_consume.js BROKER TOPIC FROM MAXBYTES MODE IDLE_MS LAST
// (MODE: eachMessage or eachBatch). kafkajs is found through NODE_PATH.
"use strict";
const { Kafka, logLevel } = require("kafkajs");

const [broker, topic, from, maxBytes, mode, idleMs, lastWanted] = process.argv.slice(2);
const kafka = new Kafka({ clientId: "txnscope-difftest", brokers: [broker], logLevel: logLevel.NOTHING });
const consumer = kafka.consumer({
  groupId: "txnscope-" + topic + "-" + process.pid + "-" + Date.now(),
  maxBytesPerPartition: Number(maxBytes),
  maxWaitTimeInMs: 50,
  retry: { retries: 0 },
});
let last = Date.now();
let sawLast = 0; // when the expected last offset was delivered
const out = [];
const touch = () => { last = Date.now(); };
const deliver = (offset) => { out.push(offset); touch(); if (offset === lastWanted && !sawLast) sawLast = Date.now(); };
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
    ? { eachBatch: async ({ batch }) => { for (const m of batch.messages) deliver(m.offset); touch(); } }
    : { eachMessage: async ({ message }) => { deliver(message.offset); } };
  await consumer.run(handler);
  consumer.seek({ topic, partition: 0, offset: from });
  touch();
  const timer = setInterval(() => {
    // Past the expected last offset, a little longer shows any extra.
    const quiet = sawLast ? 300 : Number(idleMs);
    if (joined && Date.now() - Math.max(last, sawLast) > quiet) { clearInterval(timer); finish(0); }
  }, 50);
})().catch((e) => { process.stderr.write(String(e && e.stack || e) + "\n"); finish(2); });
