// Preloaded into every process of the server under bench/soak/run.ts through NODE_OPTIONS
// (`--import file:///…/bench/soak/probe.mjs`): the primary started by servicectl and, because node:cluster
// and child_process forks inherit the environment, every worker it forks. It does nothing unless
// SOAK_PROBE_DIR names a directory.
//
// Every SOAK_PROBE_INTERVAL_MS (default 10 000) it appends one JSON line to SOAK_PROBE_DIR/<pid>.jsonl:
// process.memoryUsage() at that moment; the lowest and highest heapUsed read over the interval (every
// second); the heap used right after the last full (mark-compact) collection, seen through a `gc`
// PerformanceObserver: the live heap, the steadiest leak signal, carried until the next one; the collections
// of the interval; and the event-loop delay over the interval from perf_hooks.monitorEventLoopDelay (reset
// after each line). It forces no collection, its timers are unreferenced (it never keeps a process alive),
// and it changes nothing else.
import cluster from 'node:cluster';
import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { PerformanceObserver, constants, monitorEventLoopDelay } from 'node:perf_hooks';
import { getHeapStatistics } from 'node:v8';

const dir = process.env.SOAK_PROBE_DIR;
if (dir) {
  const intervalMs = Math.max(1000, Number(process.env.SOAK_PROBE_INTERVAL_MS) || 10_000);
  const file = join(dir, `${process.pid}.jsonl`);
  // The histogram records the whole time between two ticks of a `RESOLUTION_MS` timer: the delay is what
  // exceeds the resolution.
  const RESOLUTION_MS = 10;
  const ms = (ns) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);
  const delay = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  delay.enable();
  let heapMin = Infinity;
  let heapMax = 0;
  let sampledAt = Date.now();
  // The heap right after each full (mark-compact) collection: what is live, the leak signal. It is carried
  // from one line to the next until the next full collection.
  let heapAfterMajor = null;
  let majorAt = null;
  let majorGcs = 0;
  let minorGcs = 0;
  let gcMs = 0;
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      gcMs += entry.duration;
      if (entry.detail?.kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
        majorGcs++;
        heapAfterMajor = getHeapStatistics().used_heap_size;
        majorAt = Date.now();
      } else minorGcs++;
    }
  }).observe({ entryTypes: ['gc'] });
  const observe = () => {
    const heapUsed = getHeapStatistics().used_heap_size;
    if (heapUsed < heapMin) heapMin = heapUsed;
    if (heapUsed > heapMax) heapMax = heapUsed;
  };
  const write = () => {
    observe();
    const usage = process.memoryUsage();
    const now = Date.now();
    const line = {
      t: now,
      intervalMs: now - sampledAt,
      pid: process.pid,
      ppid: process.ppid,
      role: cluster.isWorker ? `worker ${cluster.worker?.id ?? '?'}` : process.send ? 'child' : 'primary',
      rss: usage.rss,
      heapUsed: usage.heapUsed,
      heapTotal: usage.heapTotal,
      external: usage.external,
      arrayBuffers: usage.arrayBuffers,
      heapUsedMin: heapMin,
      heapUsedMax: heapMax,
      heapAfterMajorGc: heapAfterMajor,
      majorGcAt: majorAt,
      gc: { major: majorGcs, minor: minorGcs, ms: Math.round(gcMs * 10) / 10 },
      loopDelayMs: { mean: ms(delay.mean), p50: ms(delay.percentile(50)), p99: ms(delay.percentile(99)), max: ms(delay.max), count: delay.count },
    };
    delay.reset();
    heapMin = Infinity;
    heapMax = 0;
    majorGcs = 0;
    minorGcs = 0;
    gcMs = 0;
    sampledAt = now;
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      // The directory went away (the run is over): nothing to report to.
    }
  };
  // A self-check of the harness only (run.ts --inject-leak): keep this many KiB of heap a second, forever.
  const leakKiB = Number(process.env.SOAK_PROBE_LEAK_KIB_PER_S) || 0;
  if (leakKiB > 0) {
    const kept = [];
    setInterval(() => kept.push(new Array(leakKiB * 128).fill(Math.random())), 1000).unref();
  }
  appendFileSync(file, `${JSON.stringify({ t: Date.now(), pid: process.pid, ppid: process.ppid, started: true, argv: process.argv.slice(1), execArgv: process.execArgv })}\n`);
  setInterval(observe, 1000).unref();
  setInterval(write, intervalMs).unref();
}
