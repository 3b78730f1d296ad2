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
 */

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
