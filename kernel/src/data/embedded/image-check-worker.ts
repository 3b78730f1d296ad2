/**
 * The worker thread of verify.ts's checkImageAside: runs checkImage (integrity check, migrations, row count)
 * on one extracted backup image away from the event loop, and posts back its row count or its error text.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { checkImage } from './verify.js';

const { file, source, store, known } = workerData as { file: string; source: string; store: string; known?: Array<[string, string[]]> };
try {
  const rows = checkImage(file, source, store, known ? new Map(known.map(([owner, ids]) => [owner, new Set(ids)])) : undefined);
  parentPort!.postMessage({ rows });
} catch (err) {
  parentPort!.postMessage({ error: (err as Error).message });
}
