/**
 * Reads mod_antispam's list files (spam JIDs, spam domains, spam URLs, whitelisted domains), asynchronously,
 * all or nothing: every line of every file is checked, and one unreadable file or bad line fails the whole
 * read with "file:line: what is wrong", so that the caller keeps the lists it had. Blank lines and lines
 * starting with `#` are skipped.
 */
import { readFile } from 'node:fs/promises';
import { Jid } from '@service/plugin-api';

/** The files of one virtual host, `@HOST@` already replaced; undefined: no such file. */
export interface ListFiles {
  readonly jids?: string;
  readonly domains?: string;
  readonly urls?: string;
  readonly whitelist?: string;
}

export interface SpamLists {
  /** Bare JIDs (normalized). */
  readonly jids: ReadonlySet<string>;
  readonly domains: ReadonlySet<string>;
  readonly urls: ReadonlySet<string>;
  readonly whitelist: ReadonlySet<string>;
}

export const EMPTY_LISTS: SpamLists = { jids: new Set(), domains: new Set(), urls: new Set(), whitelist: new Set() };

/** A list file that cannot be used; the message says which file, which line and why. */
export class ListFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ListFileError';
  }
}

/** A JID's normalized bare form, or undefined when the text is not a JID. */
export function bareJidOf(text: string): string | undefined {
  return Jid.tryParse(text.trim())?.bare;
}

/** A domain's normalized form (a JID of just a domain), or undefined when it is not one. */
export function domainOf(text: string): string | undefined {
  const jid = Jid.tryParse(text.trim());
  return jid && jid.user === undefined && jid.resource === undefined ? jid.host : undefined;
}

/** A URL as listed and as matched: http or https, parsed by WHATWG rules, without a trailing slash on a bare origin. */
export function urlOf(text: string): string | undefined {
  const trimmed = text.trim();
  if (!/^https?:\/\/\S+$/i.test(trimmed)) return undefined;
  try {
    const url = new URL(trimmed);
    if (!url.hostname) return undefined;
    return normalizeUrl(url);
  } catch {
    return undefined;
  }
}

export function normalizeUrl(url: URL): string {
  const text = url.href;
  return url.pathname === '/' && !url.search && !url.hash && text.endsWith('/') ? text.slice(0, -1) : text;
}

type LineParser = (line: string) => string | undefined;

const PARSERS: Record<keyof ListFiles, { parse: LineParser; what: string }> = {
  jids: { parse: bareJidOf, what: 'not a valid JID' },
  domains: { parse: domainOf, what: 'not a valid domain' },
  urls: { parse: urlOf, what: 'not an http or https URL' },
  whitelist: { parse: domainOf, what: 'not a valid domain' },
};

async function readList(file: string | undefined, kind: keyof ListFiles): Promise<Set<string>> {
  const out = new Set<string>();
  if (file === undefined) return out;
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such file' : code === 'EACCES' ? 'permission denied' : code === 'EISDIR' ? 'is a directory' : (err as Error).message;
    throw new ListFileError(`${file}: cannot read it: ${why}`);
  }
  const { parse, what } = PARSERS[kind];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.trim();
    if (line === '' || line.startsWith('#')) continue;
    const value = parse(line);
    if (value === undefined) throw new ListFileError(`${file}:${i + 1}: '${line.length > 200 ? `${line.slice(0, 200)}…` : line}' is ${what}`);
    out.add(value);
  }
  return out;
}

/** Reads every file; throws ListFileError on the first file that cannot be read or has a bad line. */
export async function readLists(files: ListFiles): Promise<SpamLists> {
  const [jids, domains, urls, whitelist] = await Promise.all([
    readList(files.jids, 'jids'),
    readList(files.domains, 'domains'),
    readList(files.urls, 'urls'),
    readList(files.whitelist, 'whitelist'),
  ]);
  return { jids, domains, urls, whitelist };
}
