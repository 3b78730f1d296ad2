/**
 * Registries a test can install plugins from over HTTP: a directory served as it is (an http(s) plugin
 * source), and a small npm-compatible registry (search by keyword, packuments, tarballs) holding packages
 * built on the fly and signed with the example publisher's key, the way an npm publisher would sign them.
 */
import { createHash, createPrivateKey, sign } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join, normalize } from 'node:path';
import * as tar from 'tar';
import { contentDigest, pluginSignaturePayload, type PackageFile } from '@service/plugin-api';
import { REPO } from './process.js';

export const EXAMPLE_KEYS = join(REPO, 'plugins-registry', 'keys');

export interface HttpRegistry {
  readonly url: string;
  /** Milliseconds a tarball takes to arrive (a slow registry, for progress); 0 by default. */
  tarballDelayMs: number;
  /** Requests served, as `METHOD path`. */
  readonly requests: string[];
  close(): Promise<void>;
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as import('node:net').AddressInfo).port}/`;
}

/** Serves `dir`'s files read-only. */
export async function serveDirectory(dir: string): Promise<HttpRegistry> {
  const requests: string[] = [];
  const server = createServer(async (req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const path = normalize(decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname));
    if (path.endsWith('.tgz') && registry.tarballDelayMs) await new Promise((resolve) => setTimeout(resolve, registry.tarballDelayMs));
    try {
      const body = await readFile(join(dir, path));
      res.writeHead(200, { 'content-length': body.length }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  const registry: HttpRegistry = { url: await listen(server), requests, tarballDelayMs: 0, close: () => new Promise((resolve) => server.close(() => resolve())) };
  return registry;
}

export interface NpmPackage {
  readonly name: string;
  readonly version: string;
  readonly files: Readonly<Record<string, string>>;
  readonly manifest?: Record<string, unknown>;
  /** Sign as a plugin (service block + content signature by the example publisher). */
  readonly plugin?: { readonly module: string; readonly pluginApi: string };
  /** Files changed after signing (a tampered package that keeps its signature). */
  readonly tamper?: Readonly<Record<string, string>>;
}

export interface NpmRegistry extends HttpRegistry {
  /** The tarball bytes of a published package, by `name@version`. */
  readonly tarballs: Map<string, Buffer>;
}

/** An npm-compatible registry holding `packages`, each packed as npm would, plugins signed by content. */
export async function npmRegistry(packages: readonly NpmPackage[]): Promise<NpmRegistry> {
  const requests: string[] = [];
  const tarballs = new Map<string, Buffer>();
  const packuments = new Map<string, { name: string; description?: string; 'dist-tags': Record<string, string>; versions: Record<string, Record<string, unknown>> }>();
  const key = createPrivateKey(await readFile(join(EXAMPLE_KEYS, 'service-examples.pem')));
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const url = new URL(req.url ?? '/', 'http://x');
    const send = (status: number, body: unknown) => {
      const bytes = Buffer.isBuffer(body) ? body : Buffer.from(JSON.stringify(body));
      res.writeHead(status, { 'content-type': Buffer.isBuffer(body) ? 'application/octet-stream' : 'application/json', 'content-length': bytes.length }).end(bytes);
    };
    if (url.pathname === '/-/v1/search') {
      const keyword = /keywords:(\S+)/.exec(url.searchParams.get('text') ?? '')?.[1];
      const objects = [...packuments.values()]
        .filter((p) => ((p.versions[p['dist-tags'].latest!]!.keywords as string[] | undefined) ?? []).includes(keyword ?? ''))
        .map((p) => ({ package: { name: p.name, version: p['dist-tags'].latest } }));
      return send(200, { objects, total: objects.length });
    }
    const tarball = /^\/(.+)\/-\/[^/]+-(\d+\.\d+\.\d+)\.tgz$/.exec(url.pathname);
    if (tarball) {
      const bytes = tarballs.get(`${decodeURIComponent(tarball[1]!)}@${tarball[2]}`);
      return bytes ? send(200, bytes) : send(404, { error: 'not found' });
    }
    const packument = packuments.get(decodeURIComponent(url.pathname.slice(1)));
    return packument ? send(200, packument) : send(404, { error: 'not found' });
  });
  const url = await listen(server);
  for (const pkg of packages) {
    let manifest: Record<string, unknown> = { name: pkg.name, version: pkg.version, ...pkg.manifest };
    const withManifest = (m: Record<string, unknown>): PackageFile[] => [
      { path: 'package.json', bytes: Buffer.from(JSON.stringify(m, null, 2)) },
      ...Object.entries(pkg.files).map(([path, text]) => ({ path, bytes: Buffer.from(text) })),
    ];
    if (pkg.plugin) {
      manifest = { ...manifest, keywords: ['service-plugin'], service: { module: pkg.plugin.module, pluginApi: pkg.plugin.pluginApi, publisher: 'service-examples' } };
      const digest = contentDigest(withManifest(manifest));
      const signature = sign(null, pluginSignaturePayload({ name: pkg.plugin.module, version: pkg.version, pluginApi: pkg.plugin.pluginApi, integrity: digest }), key).toString('base64');
      manifest = { ...manifest, service: { ...(manifest.service as object), signature } };
    }
    const files = withManifest(manifest).map((f) => (pkg.tamper?.[f.path] !== undefined ? { ...f, bytes: Buffer.from(pkg.tamper[f.path]!) } : f));
    const bytes = await pack(files);
    tarballs.set(`${pkg.name}@${pkg.version}`, bytes);
    const entry = packuments.get(pkg.name) ?? { name: pkg.name, description: manifest.description as string | undefined, 'dist-tags': {}, versions: {} };
    entry['dist-tags'].latest = pkg.version;
    entry.versions[pkg.version] = {
      ...manifest,
      dist: { tarball: `${url}${pkg.name}/-/${pkg.name.split('/').pop()}-${pkg.version}.tgz`, integrity: `sha512-${createHash('sha512').update(bytes).digest('base64')}` },
    };
    packuments.set(pkg.name, entry);
  }
  return { url, requests, tarballs, tarballDelayMs: 0, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

/** An npm-pack tarball (files under package/). */
async function pack(files: readonly PackageFile[]): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'npm-pack-'));
  try {
    for (const file of files) {
      const path = join(dir, 'package', file.path);
      await mkdir(join(path, '..'), { recursive: true });
      await writeFile(path, file.bytes);
    }
    const out = join(dir, 'package.tgz');
    await tar.c({ gzip: true, cwd: dir, file: out, portable: true }, ['package']);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
