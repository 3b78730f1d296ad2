/**
 * Registry sources: where plugin specs and tarballs come from. A source is configured as a string in
 * `plugin_sources`:
 *   - a directory path (the bundled `plugins-registry/` by default; offline),
 *   - an http(s) URL of a directory with the same layout (index.json beside the tarballs),
 *   - `npm:<registry URL>`, an npm-compatible registry, whose packages with the `service-plugin` keyword are
 *     plugins (their package.json `service` block names the module, its plugin API range, its publisher and
 *     the publisher's signature of the tarball).
 * Every source answers the same RegistryIndex, so the installer checks every plugin the same way.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { REGISTRY_FORMAT, type RegistryIndex, type RegistryPlugin, type RegistryVersion } from '@service/plugin-api';

/** The most a tarball or an index may weigh: a plugin is code, not data. */
export const MAX_DOWNLOAD_BYTES = 50 * 1024 * 1024;

export interface RegistrySource {
  /** As configured (recorded in the lockfile). */
  readonly id: string;
  /** Fetched over the network (its index is cached by modules_update_specs); a directory is read live. */
  readonly remote: boolean;
  /** For an npm-compatible registry: its URL, where a plugin's dependencies are installed from too. */
  readonly npmRegistry?: string;
  index(): Promise<RegistryIndex>;
  /** The bytes of a version's tarball. */
  tarball(name: string, version: RegistryVersion): Promise<Buffer>;
}

export class SourceError extends Error {}

export function openSource(spec: string, baseDir: string): RegistrySource {
  if (spec.startsWith('npm:')) return new NpmSource(spec, spec.slice(4));
  if (/^https?:\/\//.test(spec)) return new HttpSource(spec);
  return new DirectorySource(spec, isAbsolute(spec) ? spec : resolve(baseDir, spec));
}

class DirectorySource implements RegistrySource {
  readonly remote = false;

  constructor(
    readonly id: string,
    private readonly dir: string,
  ) {}

  async index(): Promise<RegistryIndex> {
    let text: string;
    try {
      text = await readFile(join(this.dir, 'index.json'), 'utf8');
    } catch (err) {
      throw new SourceError(`registry ${this.id}: cannot read ${join(this.dir, 'index.json')}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
    return checkIndex(this.id, text);
  }

  async tarball(name: string, version: RegistryVersion): Promise<Buffer> {
    if (/^https?:\/\//.test(version.tarball)) return download(this.id, version.tarball);
    const path = resolve(this.dir, version.tarball);
    if (!path.startsWith(`${this.dir}/`)) throw new SourceError(`registry ${this.id}: the tarball of ${name} points outside the registry (${version.tarball})`);
    try {
      return await readFile(path);
    } catch (err) {
      throw new SourceError(`registry ${this.id}: cannot read the tarball of ${name} (${version.tarball}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
    }
  }
}

class HttpSource implements RegistrySource {
  readonly remote = true;
  readonly #base: URL;

  constructor(readonly id: string) {
    this.#base = new URL(id.endsWith('/') ? id : `${id}/`);
  }

  async index(): Promise<RegistryIndex> {
    return checkIndex(this.id, (await download(this.id, new URL('index.json', this.#base).href)).toString('utf8'));
  }

  tarball(_name: string, version: RegistryVersion): Promise<Buffer> {
    return download(this.id, new URL(version.tarball, this.#base).href);
  }
}

/**
 * An npm-compatible registry: the search API lists packages with the `service-plugin` keyword; each
 * version's manifest carries `dist.tarball`, `dist.integrity` (the download's integrity) and the
 * package.json `service` block with the module name, plugin API range, publisher and signature. That
 * signature is inside the package, so it signs the package's content digest (contentDigest in the plugin
 * API), checked once the tarball is unpacked.
 */
class NpmSource implements RegistrySource {
  readonly remote = true;
  readonly npmRegistry: string;
  readonly #base: URL;

  constructor(
    readonly id: string,
    registry: string,
  ) {
    this.#base = new URL(registry.endsWith('/') ? registry : `${registry}/`);
    this.npmRegistry = this.#base.href;
  }

  async index(): Promise<RegistryIndex> {
    const search = JSON.parse((await download(this.id, new URL('-/v1/search?text=keywords:service-plugin&size=250', this.#base).href)).toString('utf8')) as {
      objects?: Array<{ package?: { name?: string } }>;
    };
    const plugins: Record<string, RegistryPlugin> = {};
    for (const hit of search.objects ?? []) {
      const pkgName = hit.package?.name;
      if (!pkgName) continue;
      const packument = JSON.parse((await download(this.id, new URL(encodeURIComponent(pkgName).replace('%40', '@'), this.#base).href)).toString('utf8')) as {
        description?: string;
        homepage?: string;
        versions?: Record<string, NpmManifest>;
      };
      for (const [version, manifest] of Object.entries(packument.versions ?? {})) {
        const service = manifest.service;
        if (!service?.module || !service.pluginApi || !service.publisher || !service.signature || !manifest.dist?.tarball || !manifest.dist.integrity) continue;
        const plugin = (plugins[service.module] ??= { summary: manifest.description ?? packument.description ?? '', publisher: service.publisher, homepage: packument.homepage, versions: {} });
        if (plugin.publisher !== service.publisher) continue; // One publisher per plugin name.
        (plugin.versions as Record<string, RegistryVersion>)[version] = {
          pluginApi: service.pluginApi,
          tarball: manifest.dist.tarball,
          integrity: manifest.dist.integrity,
          signature: service.signature,
          signs: 'content',
        };
      }
    }
    return { registry: REGISTRY_FORMAT, plugins };
  }

  tarball(_name: string, version: RegistryVersion): Promise<Buffer> {
    return download(this.id, new URL(version.tarball, this.#base).href);
  }
}

interface NpmManifest {
  description?: string;
  dist?: { tarball?: string; integrity?: string };
  service?: { module?: string; pluginApi?: string; publisher?: string; signature?: string };
}

async function download(source: string, url: string): Promise<Buffer> {
  let response: Response;
  try {
    response = await fetch(url, { redirect: 'follow', signal: AbortSignal.timeout(60_000) });
  } catch (err) {
    throw new SourceError(`registry ${source}: cannot fetch ${url}: ${(err as Error).message}`);
  }
  if (!response.ok) throw new SourceError(`registry ${source}: ${url} answered ${response.status} ${response.statusText}`);
  const length = Number(response.headers.get('content-length') ?? 0);
  if (length > MAX_DOWNLOAD_BYTES) throw new SourceError(`registry ${source}: ${url} is ${length} bytes, over the ${MAX_DOWNLOAD_BYTES}-byte limit`);
  const body = Buffer.from(await response.arrayBuffer());
  if (body.length > MAX_DOWNLOAD_BYTES) throw new SourceError(`registry ${source}: ${url} is over the ${MAX_DOWNLOAD_BYTES}-byte limit`);
  return body;
}

/** Parses an index.json and checks its shape, so a malformed registry is named, not half-read. */
function checkIndex(source: string, text: string): RegistryIndex {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new SourceError(`registry ${source}: index.json is not JSON (${(err as Error).message})`);
  }
  const index = parsed as Partial<RegistryIndex>;
  if (index?.registry !== REGISTRY_FORMAT || typeof index.plugins !== 'object' || index.plugins === null) {
    throw new SourceError(`registry ${source}: index.json is not a registry index of format ${REGISTRY_FORMAT}`);
  }
  for (const [name, plugin] of Object.entries(index.plugins)) {
    const ok =
      typeof plugin?.summary === 'string' &&
      typeof plugin.publisher === 'string' &&
      typeof plugin.versions === 'object' &&
      plugin.versions !== null &&
      Object.values(plugin.versions).every(
        (v) => typeof v?.pluginApi === 'string' && typeof v.tarball === 'string' && typeof v.integrity === 'string' && typeof v.signature === 'string',
      );
    if (!ok) throw new SourceError(`registry ${source}: the entry of ${name} in index.json lacks a summary, publisher or a version's pluginApi, tarball, integrity or signature`);
  }
  return index as RegistryIndex;
}
