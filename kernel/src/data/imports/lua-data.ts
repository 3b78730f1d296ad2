/**
 * A safe reader of Prosody's file storage (util.serialization / util.datamanager output): `return <value>;`
 * (.dat files) and a sequence of `item(<value>);` calls (.list files). Only data is understood: tables
 * (with `[key] = v`, `name = v` and positional entries), strings with every Lua escape, numbers, booleans
 * and nil. Nothing is ever evaluated; anything else is a syntax error naming the file, line and column.
 * Strings are byte strings in Lua: they are decoded as UTF-8 once complete (Prosody stores UTF-8).
 */
import { FileSyntaxError } from '../syntax-error.js';

export type LuaValue = string | number | boolean | null | LuaTable;

/** A Lua table: `array` holds the positional entries (1, 2, …), `hash` the others (string, number or boolean keys). */
export class LuaTable {
  readonly array: LuaValue[] = [];
  readonly hash = new Map<string | number | boolean, LuaValue>();

  get(key: string | number | boolean): LuaValue | undefined {
    if (typeof key === 'number' && Number.isInteger(key) && key >= 1 && key <= this.array.length) return this.array[key - 1];
    return this.hash.get(key);
  }

  /** The string-keyed entries, the usual shape of a record. */
  entries(): Array<[string, LuaValue]> {
    return [...this.hash].filter((e): e is [string, LuaValue] => typeof e[0] === 'string');
  }
}

export class LuaSyntaxError extends FileSyntaxError {}

/** Tables nested deeper than this are refused (a hostile file must not exhaust the stack). */
const MAX_DEPTH = 200;

const SIMPLE_ESCAPES: Readonly<Record<string, number>> = { a: 7, b: 8, f: 12, n: 10, r: 13, t: 9, v: 11, '\\': 92, '"': 34, "'": 39, '\n': 10 };

class Reader {
  pos = 0;
  constructor(
    readonly text: string,
    readonly file: string,
  ) {}

  fail(reason: string, at = this.pos): never {
    let line = 1;
    let lineStart = 0;
    for (let i = 0; i < at && i < this.text.length; i++) {
      if (this.text[i] === '\n') {
        line++;
        lineStart = i + 1;
      }
    }
    throw new LuaSyntaxError(this.file, line, at - lineStart + 1, reason);
  }

  /** Skips white space and comments (`-- …` and `--[[ … ]]`). */
  skip(): void {
    for (;;) {
      const c = this.text[this.pos];
      if (c === ' ' || c === '\t' || c === '\n' || c === '\r' || c === '\f' || c === '\v') this.pos++;
      else if (c === '-' && this.text[this.pos + 1] === '-') {
        this.pos += 2;
        const long = /^\[(=*)\[/.exec(this.text.slice(this.pos, this.pos + 64));
        if (long) {
          const end = this.text.indexOf(`]${long[1]}]`, this.pos);
          if (end === -1) this.fail('unfinished long comment');
          this.pos = end + long[1]!.length + 2;
        } else {
          const nl = this.text.indexOf('\n', this.pos);
          this.pos = nl === -1 ? this.text.length : nl + 1;
        }
      } else return;
    }
  }

  peek(): string | undefined {
    this.skip();
    return this.text[this.pos];
  }

  expect(token: string): void {
    this.skip();
    if (!this.text.startsWith(token, this.pos)) this.fail(`expected '${token}'${this.pos < this.text.length ? `, found '${this.text[this.pos]}'` : ' before the end of the file'}`);
    this.pos += token.length;
  }

  name(): string | undefined {
    this.skip();
    const m = /^[A-Za-z_][A-Za-z0-9_]*/.exec(this.text.slice(this.pos, this.pos + 256));
    return m?.[0];
  }

  value(depth: number): LuaValue {
    const c = this.peek();
    if (c === undefined) this.fail('expected a value before the end of the file');
    if (c === '{') return this.table(depth + 1);
    if (c === '"' || c === "'") return this.string();
    if (c === '[' && /^\[=*\[/.test(this.text.slice(this.pos, this.pos + 64))) return this.longString();
    if (c === '-' || c === '.' || (c >= '0' && c <= '9')) return this.number();
    const word = this.name();
    if (word === 'true' || word === 'false' || word === 'nil') {
      this.pos += word.length;
      return word === 'true' ? true : word === 'false' ? false : null;
    }
    this.fail(word ? `'${word}' is not data (only tables, strings, numbers, booleans and nil are read)` : `unexpected '${c}'`);
  }

  table(depth: number): LuaTable {
    if (depth > MAX_DEPTH) this.fail(`tables nested deeper than ${MAX_DEPTH}`);
    this.expect('{');
    const table = new LuaTable();
    for (;;) {
      const c = this.peek();
      if (c === '}') {
        this.pos++;
        return table;
      }
      if (c === undefined) this.fail("unfinished table: expected '}'");
      if (c === '[' && !/^\[=*\[/.test(this.text.slice(this.pos, this.pos + 64))) {
        const at = this.pos;
        this.pos++;
        const key = this.value(depth);
        this.expect(']');
        this.expect('=');
        const value = this.value(depth);
        if (key === null || (typeof key === 'number' && Number.isNaN(key))) this.fail('a table key may not be nil or NaN', at);
        if (key instanceof LuaTable) this.fail('a table key may not be a table', at);
        if (typeof key === 'number' && Number.isInteger(key) && key === table.array.length + 1 && value !== null) table.array.push(value);
        else if (value !== null) table.hash.set(key, value);
      } else {
        const word = this.name();
        const after = word ? this.text.slice(this.pos + word.length) : '';
        if (word && word !== 'true' && word !== 'false' && word !== 'nil' && /^\s*=(?!=)/.test(after)) {
          this.pos += word.length;
          this.expect('=');
          const value = this.value(depth);
          if (value !== null) table.hash.set(word, value);
        } else {
          table.array.push(this.value(depth));
        }
      }
      const sep = this.peek();
      if (sep === ',' || sep === ';') this.pos++;
      else if (sep !== '}') this.fail(sep === undefined ? "unfinished table: expected '}'" : `expected ',', ';' or '}' in a table, found '${sep}'`);
    }
  }

  string(): string {
    const quote = this.text[this.pos]!;
    const start = this.pos;
    this.pos++;
    const bytes: number[] = [];
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined || c === '\n') this.fail('unfinished string', start);
      this.pos++;
      if (c === quote) break;
      if (c !== '\\') {
        // Literal characters are already text: keep their UTF-8 bytes.
        const code = c.codePointAt(0)!;
        if (code < 0x80) bytes.push(code);
        else {
          const ch = String.fromCodePoint(code);
          if (ch.length === 2) this.pos++;
          bytes.push(...Buffer.from(ch, 'utf8'));
        }
        continue;
      }
      const e = this.text[this.pos];
      if (e === undefined) this.fail('unfinished string', start);
      if (e in SIMPLE_ESCAPES) {
        bytes.push(SIMPLE_ESCAPES[e]!);
        this.pos++;
      } else if (e === '\r') {
        bytes.push(10);
        this.pos += this.text[this.pos + 1] === '\n' ? 2 : 1;
      } else if (e >= '0' && e <= '9') {
        const digits = /^[0-9]{1,3}/.exec(this.text.slice(this.pos, this.pos + 3))![0];
        const byte = Number(digits);
        if (byte > 255) this.fail(`escape '\\${digits}' is larger than 255`);
        bytes.push(byte);
        this.pos += digits.length;
      } else if (e === 'x') {
        const hex = /^[0-9A-Fa-f]{2}/.exec(this.text.slice(this.pos + 1, this.pos + 3));
        if (!hex) this.fail("escape '\\x' needs two hexadecimal digits");
        bytes.push(parseInt(hex[0], 16));
        this.pos += 3;
      } else if (e === 'z') {
        this.pos++;
        while (/\s/.test(this.text[this.pos] ?? '')) this.pos++;
      } else if (e === 'u') {
        const m = /^\{([0-9A-Fa-f]{1,8})\}/.exec(this.text.slice(this.pos + 1, this.pos + 12));
        if (!m) this.fail("escape '\\u' needs {hexadecimal digits}");
        const code = parseInt(m[1]!, 16);
        if (code > 0x10ffff) this.fail(`escape '\\u{${m[1]}}' is not a Unicode code point`);
        bytes.push(...Buffer.from(String.fromCodePoint(code), 'utf8'));
        this.pos += m[0].length + 1;
      } else this.fail(`invalid escape '\\${e}'`);
    }
    return Buffer.from(bytes).toString('utf8');
  }

  longString(): string {
    const open = /^\[(=*)\[/.exec(this.text.slice(this.pos, this.pos + 64))!;
    const close = `]${open[1]}]`;
    const begin = this.pos + open[0].length;
    const end = this.text.indexOf(close, begin);
    if (end === -1) this.fail('unfinished long string');
    this.pos = end + close.length;
    // A newline right after the opening bracket is not part of the string.
    return this.text.slice(begin, end).replace(/^\r?\n/, '');
  }

  number(): number {
    const m = /^-?\s*(0[xX][0-9A-Fa-f]+|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|math\.huge)/.exec(this.text.slice(this.pos, this.pos + 400));
    if (!m) this.fail('expected a number');
    this.pos += m[0].length;
    const negative = m[0].startsWith('-');
    const body = m[1]!;
    const magnitude = body === 'math.huge' ? Infinity : /^0[xX]/.test(body) ? parseInt(body.slice(2), 16) : Number(body);
    return negative ? -magnitude : magnitude;
  }
}

/** Reads a .dat file: `return <value>;` (an empty file or `return nil` is nil). */
export function parseLuaReturn(text: string, file = '<text>'): LuaValue {
  const reader = new Reader(text.replace(/^#![^\n]*/, ''), file);
  if (reader.peek() === undefined) return null;
  if (reader.name() !== 'return') reader.fail("expected 'return'");
  reader.pos += 'return'.length;
  const value = reader.peek() === undefined || reader.peek() === ';' ? null : reader.value(0);
  if (reader.peek() === ';') reader.pos++;
  if (reader.peek() !== undefined) reader.fail('unexpected text after the returned value');
  return value;
}

/** Reads a .list file: any number of `item(<value>);` calls. */
export function parseLuaList(text: string, file = '<text>'): LuaValue[] {
  const reader = new Reader(text, file);
  const items: LuaValue[] = [];
  while (reader.peek() !== undefined) {
    if (reader.name() !== 'item') reader.fail("expected 'item(' (a Prosody list file)");
    reader.pos += 'item'.length;
    reader.expect('(');
    items.push(reader.value(0));
    reader.expect(')');
    if (reader.peek() === ';') reader.pos++;
  }
  return items;
}
