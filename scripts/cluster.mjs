#!/usr/bin/env node
/**
 * `npm run cluster`: three nodes of one cluster on loopback, for a newcomer to watch it work. Each node runs
 * config.cluster.example.yml with its own node name, data directory and ports (c2s 5222/5232/5242, HTTP
 * 5280/5290/5300), against the local MariaDB (database `test`) and Redis. Output is prefixed by node;
 * Ctrl-C stops them all. Nothing here is special to the demo: it is what an operator does on one machine.
 *
 *   node scripts/cluster.mjs [--nodes 3]
 */
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { parse, stringify } from 'yaml';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({ options: { nodes: { type: 'string', default: '3' } } });
const count = Number(values.nodes);
if (!Number.isInteger(count) || count < 1 || count > 9) {
  console.error('--nodes: expected 1 to 9');
  process.exit(2);
}
const base = parse(readFileSync(join(repo, 'config.cluster.example.yml'), 'utf8'));
const dir = join(repo, 'data', 'cluster');
mkdirSync(dir, { recursive: true });

const children = [];
for (let i = 1; i <= count; i++) {
  const config = structuredClone(base);
  config.node_name = `service@node${i}`;
  config.data_dir = join(dir, `node${i}`);
  config.listen[0].port = 5222 + (i - 1) * 10;
  config.listen[1].port = 5280 + (i - 1) * 10;
  const file = join(dir, `node${i}.yml`);
  writeFileSync(file, stringify(config));
  const child = spawn(process.execPath, [join(repo, 'cli/dist/servicectl.js'), '--config', file, 'foreground'], { stdio: ['ignore', 'pipe', 'pipe'] });
  for (const stream of [child.stdout, child.stderr]) {
    let rest = '';
    stream.on('data', (chunk) => {
      const lines = (rest + chunk).split('\n');
      rest = lines.pop();
      for (const line of lines) console.log(`[node${i}] ${line}`);
    });
  }
  child.on('exit', (code, signal) => console.log(`[node${i}] exited (${signal ?? code})`));
  children.push(child);
  console.log(`[node${i}] c2s 127.0.0.1:${config.listen[0].port}, HTTP http://127.0.0.1:${config.listen[1].port}/api, configuration ${file}`);
}
console.log(`\nRegister an account (the database is shared):  npx servicectl --config ${join(dir, 'node1.yml')} register alice localhost secret`);
console.log(`See the cluster:                                 npx servicectl --config ${join(dir, 'node2.yml')} list_cluster_detailed`);
console.log('Connect clients to different nodes; Ctrl-C stops every node.\n');

const stop = () => {
  for (const child of children) child.kill('SIGTERM');
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
