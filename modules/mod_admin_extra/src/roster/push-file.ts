/**
 * The roster file of push_roster and push_roster_all: a list of (username, servername, group, nick)
 * entries, in one of two forms.
 *
 * ejabberd's form, Erlang terms (any file name not ending in `.json`): one list of 4-tuples, ended by a
 * full stop. Each element is a binary `<<"text">>` (also `<<"text"/utf8>>` and `<<>>`) or a string
 * `"text"`, with Erlang's escapes; `%` starts a comment.
 *
 *     %% Workers
 *     [{<<"user1">>,<<"localhost">>,<<"Workers">>,<<"User 1">>},
 *      {"user2","localhost","Workers","User 2"}].
 *
 * JSON (a file name ending in `.json`): an array whose elements are `[user, host, group, nick]` arrays or
 * `{"user", "host", "group", "nick"}` objects (`group` and `nick` may be left out).
 *
 *     [{"user": "user1", "host": "localhost", "group": "Workers", "nick": "User 1"},
 *      ["user2", "localhost", "Workers", "User 2"]]
 *
 * Text is Unicode (UTF-8) in both. An empty group means no group, an empty nick no name. Problems are
 * reported with the line they are on.
 */
import { readFile } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { badArgument, notFound } from '@service/plugin-api';

export interface PushEntry {
  readonly user: string;
  readonly host: string;
  readonly group: string;
  readonly nick: string;
  /** Where the entry starts in the file, for messages. */
  readonly line: number;
}

export class PushFileError extends Error {
  constructor(
    readonly line: number,
    message: string,
  ) {
    super(message);
    this.name = 'PushFileError';
  }
}

const READ_ERRORS: Readonly<Record<string, string>> = {
  EACCES: 'permission denied',
  EPERM: 'permission denied',
  EISDIR: 'it is a directory',
  ENOTDIR: 'a part of the path is not a directory',
  ELOOP: 'too many symbolic links',
  ENAMETOOLONG: 'the name is too long',
};

/** Largest file read: a roster file of 1000 entries is about 60 KB. */
const MAX_FILE_BYTES = 16 * 1024 * 1024;

/**
 * Reads and parses `path` (relative to data_dir unless absolute). 404 when it does not exist; 400 naming
 * `file` when it cannot be read or is malformed (with the line).
 */
export async function readPushFile(path: string, dataDir: string): Promise<{ file: string; entries: PushEntry[] }> {
  if (!path) throw badArgument('file', 'file must be a path (absolute, or relative to data_dir)');
  const file = isAbsolute(path) ? path : resolve(dataDir, path);
  let bytes: Buffer;
  try {
    bytes = await readFile(file);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw notFound(`the roster file ${file} does not exist`);
    throw badArgument('file', `cannot read the roster file ${file}: ${code ? `${code}${READ_ERRORS[code] ? ` (${READ_ERRORS[code]})` : ''}` : (err as Error).message}`);
  }
  if (bytes.length > MAX_FILE_BYTES) throw badArgument('file', `the roster file ${file} is larger than ${MAX_FILE_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw badArgument('file', `the roster file ${file} is not UTF-8 text`);
  }
  const json = file.toLowerCase().endsWith('.json');
  try {
    return { file, entries: json ? parseJsonRoster(text) : parseErlangRoster(text) };
  } catch (err) {
    if (err instanceof PushFileError) {
      throw badArgument('file', `${file} line ${err.line}: ${err.message}${json ? '' : " (ejabberd's Erlang terms are expected; a file whose name ends in .json is read as JSON)"}`);
    }
    throw err;
  }
}

/** A cursor over the text that knows its line. */
class Cursor {
  pos = 0;
  line = 1;

  constructor(readonly text: string) {}

  get done(): boolean {
    return this.pos >= this.text.length;
  }

  peek(n = 0): string {
    return this.text[this.pos + n] ?? '';
  }

  take(): string {
    const c = this.text[this.pos++] ?? '';
    if (c === '\n') this.line++;
    return c;
  }

  startsWith(s: string): boolean {
    return this.text.startsWith(s, this.pos);
  }

  fail(message: string, line = this.line): never {
    throw new PushFileError(line, message);
  }

  /**
   * What is at the cursor, for messages: punctuation as itself, anything else by its kind. The file can
   * be any file the server may read, so a message never quotes its words or numbers.
   */
  here(): string {
    if (this.done) return 'the end of the file';
    const c = this.peek();
    if (/^[[\]{}<>(),.:;"'\/=%#|+-]$/.test(c)) return `'${c}'`;
    if (/^\p{L}$/u.test(c)) return 'a name';
    if (/^\p{N}$/u.test(c)) return 'a number';
    return `the character U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
  }

  expect(s: string, what = `'${s}'`): void {
    this.skipSpace();
    if (!this.startsWith(s)) this.fail(`expected ${what}, found ${this.here()}`);
    for (let i = 0; i < s.length; i++) this.take();
  }

  skipSpace(comments?: string): void {
    for (;;) {
      const c = this.peek();
      if (c === ' ' || c === '\t' || c === '\r' || c === '\n' || c === '\ufeff') this.take();
      else if (comments && c === comments) while (!this.done && this.peek() !== '\n') this.take();
      else return;
    }
  }
}

// ---------------------------------------------------------------------------------------------------------
// Erlang terms

export function parseErlangRoster(text: string): PushEntry[] {
  const c: Cursor = new Cursor(text);
  const space = () => c.skipSpace('%');
  space();
  c.expect('[', "a list '[' of {User, Server, Group, Nick} tuples");
  const entries: PushEntry[] = [];
  space();
  if (c.peek() === ']') c.take();
  else {
    for (;;) {
      space();
      entries.push(erlangTuple(c, space));
      space();
      if (c.peek() === ',') {
        c.take();
        continue;
      }
      if (c.peek() === ']') {
        c.take();
        break;
      }
      c.fail(`expected ',' or ']' after a tuple, found ${c.here()}`);
    }
  }
  space();
  if (c.peek() !== '.') c.fail(`expected '.' after the list (Erlang terms end with a full stop), found ${c.here()}`);
  c.take();
  space();
  if (!c.done) c.fail(`expected the end of the file after the list, found ${c.here()}: the file holds one list`);
  return entries;
}

function erlangTuple(c: Cursor, space: () => void): PushEntry {
  const line = c.line;
  if (c.peek() !== '{') c.fail(`expected a tuple '{User, Server, Group, Nick}', found ${c.here()}`);
  c.take();
  const fields: string[] = [];
  for (;;) {
    space();
    if (c.peek() === '}' && fields.length === 0) c.fail('a tuple is empty: it needs {User, Server, Group, Nick}');
    fields.push(erlangText(c, space));
    space();
    if (c.peek() === ',') {
      c.take();
      continue;
    }
    if (c.peek() === '}') {
      c.take();
      break;
    }
    c.fail(`expected ',' or '}' in a tuple, found ${c.here()}`);
  }
  if (fields.length !== 4) c.fail(`a tuple has ${fields.length} elements; it needs 4: {User, Server, Group, Nick}`, line);
  const [user, host, group, nick] = fields as [string, string, string, string];
  return { user, host, group, nick, line };
}

/** A binary `<<"…">>` / `<<"…"/utf8>>` / `<<>>`, or one or more adjacent strings `"…"`. */
function erlangText(c: Cursor, space: () => void): string {
  if (c.startsWith('<<')) {
    c.take();
    c.take();
    space();
    let out = '';
    if (c.startsWith('>>')) {
      c.take();
      c.take();
      return out;
    }
    for (;;) {
      space();
      if (c.peek() !== '"') c.fail(`expected a string inside <<…>>, found ${c.here()}`);
      out += erlangString(c);
      space();
      if (c.peek() === '/') {
        c.take();
        const type = /^[a-z0-9]+/.exec(c.text.slice(c.pos))?.[0] ?? '';
        if (type !== 'utf8') c.fail(`only /utf8 is accepted after a string in a binary, found '/${type}'`);
        for (let i = 0; i < type.length; i++) c.take();
        space();
      }
      if (c.peek() === ',') {
        c.take();
        continue;
      }
      if (c.startsWith('>>')) {
        c.take();
        c.take();
        return out;
      }
      c.fail(`expected '>>' to end a binary, found ${c.here()}`);
    }
  }
  if (c.peek() === '"') {
    let out = erlangString(c);
    // Adjacent string literals are one string in Erlang.
    for (;;) {
      const at = c.pos;
      const line = c.line;
      space();
      if (c.peek() !== '"') {
        c.pos = at;
        c.line = line;
        return out;
      }
      out += erlangString(c);
    }
  }
  return c.fail(`expected a text (<<"…">> or "…"), found ${c.here()}`);
}

const ERLANG_ESCAPES: Readonly<Record<string, string>> = { b: '\b', d: '\x7f', e: '\x1b', f: '\f', n: '\n', r: '\r', s: ' ', t: '\t', v: '\v' };

function erlangString(c: Cursor): string {
  const line = c.line;
  c.take();
  let out = '';
  for (;;) {
    if (c.done) c.fail('a string is not closed (missing ")', line);
    const ch = c.take();
    if (ch === '"') return out;
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const e = c.take();
    if (e === '') c.fail('a string is not closed (missing ")', line);
    if (ERLANG_ESCAPES[e] !== undefined) out += ERLANG_ESCAPES[e];
    else if (/[0-7]/.test(e)) {
      let digits = e;
      while (digits.length < 3 && /[0-7]/.test(c.peek())) digits += c.take();
      out += String.fromCodePoint(parseInt(digits, 8));
    } else if (e === 'x') {
      let hex: string;
      if (c.peek() === '{') {
        c.take();
        hex = '';
        while (/[0-9a-fA-F]/.test(c.peek())) hex += c.take();
        if (c.peek() !== '}' || !hex) c.fail('a \\x{…} escape needs hexadecimal digits and a closing }');
        c.take();
      } else {
        hex = c.take() + c.take();
        if (!/^[0-9a-fA-F]{2}$/.test(hex)) c.fail('a \\x escape needs two hexadecimal digits');
      }
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) c.fail(`\\x{${hex}} is not a Unicode code point`);
      out += String.fromCodePoint(code);
    } else if (e === '^') {
      const ctl = c.take();
      if (!/[@-_a-z?]/i.test(ctl)) c.fail(`\\^${ctl} is not a control character escape`);
      out += ctl === '?' ? '\x7f' : String.fromCharCode(ctl.toUpperCase().charCodeAt(0) & 0x1f);
    } else out += e;
  }
}

// ---------------------------------------------------------------------------------------------------------
// JSON

type JsonValue = { line: number } & ({ kind: 'string'; value: string } | { kind: 'array'; items: JsonValue[] } | { kind: 'object'; fields: Array<[string, JsonValue]> });

const FIELDS = ['user', 'host', 'group', 'nick'] as const;

export function parseJsonRoster(text: string): PushEntry[] {
  const c: Cursor = new Cursor(text);
  c.skipSpace();
  const top = jsonValue(c);
  c.skipSpace();
  if (!c.done) c.fail(`expected the end of the file after the array, found ${c.here()}`);
  if (top.kind !== 'array') c.fail('the file must hold an array of entries', top.line);
  return top.items.map((item) => jsonEntry(c, item));
}

function jsonEntry(c: Cursor, item: JsonValue): PushEntry {
  const text = (v: JsonValue, what: string): string => (v.kind === 'string' ? v.value : c.fail(`${what} must be a string`, v.line));
  if (item.kind === 'array') {
    if (item.items.length !== 4) c.fail(`an entry has ${item.items.length} elements; it needs 4: [user, host, group, nick]`, item.line);
    const [user, host, group, nick] = item.items.map((v, i) => text(v, FIELDS[i]!)) as [string, string, string, string];
    return { user, host, group, nick, line: item.line };
  }
  if (item.kind === 'object') {
    const values: Partial<Record<(typeof FIELDS)[number], string>> = {};
    for (const [name, value] of item.fields) {
      if (!(FIELDS as readonly string[]).includes(name)) c.fail(`unknown field '${name}': an entry has user, host, group and nick`, value.line);
      values[name as (typeof FIELDS)[number]] = text(value, name);
    }
    if (values.user === undefined || values.host === undefined) c.fail('an entry needs at least user and host', item.line);
    return { user: values.user, host: values.host, group: values.group ?? '', nick: values.nick ?? '', line: item.line };
  }
  return c.fail('an entry must be an array [user, host, group, nick] or an object {"user", "host", "group", "nick"}', item.line);
}

function jsonValue(c: Cursor): JsonValue {
  c.skipSpace();
  const line = c.line;
  const ch = c.peek();
  if (ch === '"') return { line, kind: 'string', value: jsonString(c) };
  if (ch === '[') {
    c.take();
    const items: JsonValue[] = [];
    c.skipSpace();
    if (c.peek() === ']') {
      c.take();
      return { line, kind: 'array', items };
    }
    for (;;) {
      items.push(jsonValue(c));
      c.skipSpace();
      const sep = c.take();
      if (sep === ']') return { line, kind: 'array', items };
      if (sep !== ',') c.fail(`expected ',' or ']' in an array, found ${sep ? `'${sep}'` : 'the end of the file'}`);
    }
  }
  if (ch === '{') {
    c.take();
    const fields: Array<[string, JsonValue]> = [];
    c.skipSpace();
    if (c.peek() === '}') {
      c.take();
      return { line, kind: 'object', fields };
    }
    for (;;) {
      c.skipSpace();
      if (c.peek() !== '"') c.fail(`expected a field name in quotes, found ${c.here()}`);
      const name = jsonString(c);
      c.expect(':');
      fields.push([name, jsonValue(c)]);
      c.skipSpace();
      const sep = c.take();
      if (sep === '}') return { line, kind: 'object', fields };
      if (sep !== ',') c.fail(`expected ',' or '}' in an object, found ${sep ? `'${sep}'` : 'the end of the file'}`);
    }
  }
  if (c.done) return c.fail('unexpected end of the file');
  return c.fail(`expected a string, an array or an object, found ${c.here()}`);
}

const JSON_ESCAPES: Readonly<Record<string, string>> = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };

function jsonString(c: Cursor): string {
  const line = c.line;
  c.take();
  let out = '';
  for (;;) {
    if (c.done) c.fail('a string is not closed (missing ")', line);
    const ch = c.take();
    if (ch === '"') return out;
    if (ch === '\n') c.fail('a string is not closed on its line (missing ")', line);
    if (ch !== '\\') {
      out += ch;
      continue;
    }
    const e = c.take();
    if (JSON_ESCAPES[e] !== undefined) out += JSON_ESCAPES[e];
    else if (e === 'u') {
      const hex = c.text.slice(c.pos, c.pos + 4);
      if (!/^[0-9a-fA-F]{4}$/.test(hex)) c.fail('a \\u escape needs four hexadecimal digits');
      for (let i = 0; i < 4; i++) c.take();
      // Surrogate pairs come as two escapes; the string holds UTF-16, so they join by themselves.
      out += String.fromCharCode(parseInt(hex, 16));
    } else c.fail(`'\\${e}' is not a JSON escape`);
  }
}
