/**
 * The publishing contract between plugin publishers and the server: the shape of a registry's index.json and
 * the exact bytes a publisher signs. It lives in the plugin API because both sides need it: a publisher's
 * tool writes and signs with it (plugins-registry/tools/publish.mjs), the server's installer reads and
 * verifies with it. A change here is a change of the published contract (bump REGISTRY_FORMAT).
 *
 * A registry is a directory (or an HTTP URL with the same layout):
 *
 *   index.json                          RegistryIndex
 *   <name>/<name>-<version>.tgz         the package, npm-pack layout (files under `package/`)
 *
 * Each version carries the tarball's integrity (Subresource-Integrity form, sha512) and an ed25519 signature
 * by its publisher over pluginSignaturePayload(): the name, version, plugin API range and integrity together,
 * so a signature cannot be moved to another plugin, another version or another tarball.
 *
 * On an npm-compatible registry the signature travels inside the package (package.json `service.signature`),
 * so it cannot sign the tarball that contains it: it signs the package's content digest instead
 * (contentDigest: every file's path and sha512, package.json without its signature), and the registry's own
 * dist.integrity guards the download.
 */
import { createHash } from 'node:crypto';

/** The index format this plugin API reads and writes. */
export const REGISTRY_FORMAT = 1;

export interface RegistryIndex {
  readonly registry: typeof REGISTRY_FORMAT;
  readonly plugins: Readonly<Record<string, RegistryPlugin>>;
}

export interface RegistryPlugin {
  /** One line: what the plugin does (modules_available shows it). */
  readonly summary: string;
  /** Who signs its versions: the name under which operators trust the publisher's key (plugin_trusted_keys). */
  readonly publisher: string;
  readonly homepage?: string;
  readonly versions: Readonly<Record<string, RegistryVersion>>;
}

export interface RegistryVersion {
  /** The plugin API range the version was built for (its definition's pluginApi). */
  readonly pluginApi: string;
  /** The tarball's path relative to the index (or an absolute http(s) URL). */
  readonly tarball: string;
  /** `sha512-<base64>` of the tarball's bytes. */
  readonly integrity: string;
  /** base64 ed25519 signature of pluginSignaturePayload() by the publisher's key. */
  readonly signature: string;
  /** ISO date of publication. */
  readonly published?: string;
  /**
   * What the signature's `integrity` is: the tarball's sha512 (`tarball`, the default, for registry
   * directories) or the package's content digest (`content`, for npm registries; see contentDigest).
   */
  readonly signs?: 'tarball' | 'content';
}

/** What a publisher signs for one version of a plugin. */
export interface SignedFacts {
  readonly name: string;
  readonly version: string;
  readonly pluginApi: string;
  readonly integrity: string;
}

/** The exact bytes signed for a version: one `key=value` line per fact after a format line. */
export function pluginSignaturePayload(facts: SignedFacts): Buffer {
  for (const [key, value] of Object.entries(facts)) {
    if (typeof value !== 'string' || !value || /[\r\n]/.test(value)) throw new TypeError(`${key} must be a one-line, non-empty string`);
  }
  return Buffer.from(
    `service-plugin-signature-v1\nname=${facts.name}\nversion=${facts.version}\npluginApi=${facts.pluginApi}\nintegrity=${facts.integrity}\n`,
    'utf8',
  );
}

/** One file of an unpacked package: its path under the package root (`/`-separated) and its bytes. */
export interface PackageFile {
  readonly path: string;
  readonly bytes: Buffer;
}

/**
 * The digest a content signature signs: `content-sha512-<base64>` of one line per file, sorted by path,
 * `<path> <sha512 hex>`. package.json counts without `service.signature` and in a canonical form (keys
 * sorted, no spaces), so adding the signature, or a registry re-indenting the file, changes nothing.
 */
export function contentDigest(files: readonly PackageFile[]): string {
  const lines = [...files]
    .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    .map((file) => `${file.path} ${createHash('sha512').update(file.path === 'package.json' ? canonicalManifest(file.bytes) : file.bytes).digest('hex')}\n`);
  return `content-sha512-${createHash('sha512').update(lines.join('')).digest('base64')}`;
}

function canonicalManifest(bytes: Buffer): Buffer {
  const manifest = JSON.parse(bytes.toString('utf8')) as { service?: Record<string, unknown> };
  if (manifest.service && typeof manifest.service === 'object') {
    const { signature: _signature, ...service } = manifest.service;
    manifest.service = service;
  }
  return Buffer.from(canonicalJson(manifest), 'utf8');
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonicalJson((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value);
}
