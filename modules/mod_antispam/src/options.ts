/**
 * mod_antispam's options, with ejabberd 25.07's names, values and defaults: the list files, the dump file,
 * the access rule of who is not filtered, the size of the spam filter cache and the real-time block lists
 * (RTBL) to subscribe to. Declared as data; the odd value forms (`unlimited`, `true` for xmppbl.org, a
 * service given by its host alone) are read here, once, into plain typed values.
 */
import type { OptionsSchema } from '@service/plugin-api';

/** ejabberd's default RTBL node, the one xmppbl.org publishes blocked domains on. */
export const DEFAULT_RTBL_NODE = 'spam_source_domains';
/** The service `rtbl_services: true` means. */
export const XMPPBL_HOST = 'xmppbl.org';

export interface RtblService {
  readonly host: string;
  readonly node: string;
}

/** A file option's value: undefined for `none` (or false), else its path. Idempotent (defaults are not parsed). */
export function parseFile(value: unknown): string | undefined {
  if (value === 'none' || value === false || value === undefined || value === null) return undefined;
  if (typeof value === 'string' && value.trim() !== '') return value;
  throw new Error(`got ${JSON.stringify(value)}`);
}

/** A file option: `none` (or false) for no file, else its path; `@HOST@` stands for the virtual host. */
function fileOption(doc: string) {
  return {
    type: 'custom' as const,
    expected: 'none or a file path',
    default: 'none',
    parse: parseFile,
    doc,
  };
}

/** rtbl_services' value as a list of services. Idempotent (defaults are not parsed). */
export function parseRtblServices(value: unknown): RtblService[] {
  if (value === false || value === undefined || value === null) return [];
  if (value === true) return [{ host: XMPPBL_HOST, node: DEFAULT_RTBL_NODE }];
  const list = Array.isArray(value) ? value : [value];
  return list.map((entry, index) => {
    if (typeof entry === 'string' && entry.trim()) return { host: entry.trim().toLowerCase(), node: DEFAULT_RTBL_NODE };
    if (entry && typeof entry === 'object' && !Array.isArray(entry)) {
      const { host, node, ...rest } = entry as Record<string, unknown>;
      const unknown = Object.keys(rest);
      if (unknown.length) throw new Error(`entry ${index + 1} has an unknown field '${unknown[0]}' (only host and node)`);
      if (typeof host !== 'string' || !host.trim()) throw new Error(`entry ${index + 1} lacks its host (the pubsub service's domain)`);
      if (node !== undefined && (typeof node !== 'string' || !node.trim())) throw new Error(`entry ${index + 1}: node must be a node name`);
      return { host: host.trim().toLowerCase(), node: typeof node === 'string' ? node.trim() : DEFAULT_RTBL_NODE };
    }
    throw new Error(`entry ${index + 1} is ${JSON.stringify(entry)}, not a host or {host, node}`);
  });
}

export const antispamOptions = {
  access_spam: {
    type: 'string',
    default: 'none',
    doc: "Access rule of the recipients whose incoming traffic is not filtered: a recipient for whom it answers `allow` gets spam too. The default, `none`, filters for every account.",
  },
  cache_size: {
    type: 'custom',
    expected: "a number of JIDs (0 or more) or 'unlimited'",
    default: 10000,
    parse: (value: unknown): number => {
      if (value === 'unlimited' || value === 'infinity') return Infinity;
      if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
      throw new Error(`got ${JSON.stringify(value)}`);
    },
    doc: "How many senders the spam filter cache holds per virtual host; when it is full, the half that was seen least recently is forgotten. `0` turns the cache off, `unlimited` never forgets. Shared by every worker and cluster node.",
  },
  rtbl_services: {
    type: 'custom',
    expected: 'false, true, or a list of pubsub services (a host, or {host, node})',
    default: false,
    parse: (value: unknown): RtblService[] => parseRtblServices(value),
    doc: `Real-time block lists: pubsub nodes whose item ids are blocked domains (as xmppbl.org publishes them). Each entry is \`{host: pubsub.example.org, node: …}\` (node \`${DEFAULT_RTBL_NODE}\` when left out) or just the host; \`true\` means xmppbl.org, \`false\` (the default) none. Each host subscribes from its own domain JID (\`<host>/rtbl\`), fetches the current items, and follows publications (blocked) and retractions (unblocked) live.`,
  },
  spam_domains_file: fileOption('A file of spam domains, one a line: messages and subscription requests from any JID of a listed domain are refused. `@HOST@` is replaced by the virtual host.'),
  spam_jids_file: fileOption('A file of spammer JIDs, one a line: their messages and subscription requests are refused, and so are messages that mention one of them in the body (whose sender then enters the cache).'),
  spam_urls_file: fileOption('A file of URLs (http or https), one a line: a message whose body contains one is refused and its sender enters the cache.'),
  whitelist_domains_file: fileOption('A file of domains, one a line, that always pass: a listed domain is never blocked (by the files, a command or an RTBL) and its senders are never filtered.'),
  spam_dump_file: {
    type: 'custom',
    expected: 'false, true or a file path',
    default: false,
    parse: (value: unknown): string | boolean => {
      if (typeof value === 'boolean') return value;
      if (typeof value === 'string' && value.trim() !== '') return value;
      throw new Error(`got ${JSON.stringify(value)}`);
    },
    doc: 'Where refusals are recorded, one line each (time, sender, recipient, reason), mode 0600: a path (`@HOST@` is the virtual host), `true` for `spam_dump_@HOST@.log` in the data directory, `false` (the default) for none.',
  },
} satisfies OptionsSchema;
