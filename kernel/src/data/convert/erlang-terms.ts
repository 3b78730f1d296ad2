/**
 * A reader of Erlang terms as ejabberd's legacy configuration (ejabberd.cfg, file:consult) writes them: a
 * sequence of terms each ended by a dot, `%` comments. Atoms (bare and 'quoted'), "strings" (adjacent ones
 * joined), <<"binaries">>, integers (with base#digits and $c characters), floats, tuples, lists (with
 * `[H | T]`) and maps. Nothing is evaluated. A syntax error names the file, line and column.
 */
import { FileSyntaxError } from '../syntax-error.js';

export type ErlTerm =
  | { readonly kind: 'atom'; readonly value: string }
  | { readonly kind: 'string'; readonly value: string }
  | { readonly kind: 'binary'; readonly value: string }
  | { readonly kind: 'integer'; readonly value: number }
  | { readonly kind: 'float'; readonly value: number }
  | { readonly kind: 'tuple'; readonly items: readonly ErlTerm[] }
  | { readonly kind: 'list'; readonly items: readonly ErlTerm[] }
  | { readonly kind: 'map'; readonly entries: ReadonlyArray<readonly [ErlTerm, ErlTerm]> };

/** A top-level term with the line it starts on (for messages naming what was not converted). */
export interface LocatedTerm {
  readonly term: ErlTerm;
  readonly line: number;
}

export class ErlangSyntaxError extends FileSyntaxError {}

const MAX_DEPTH = 200;

/** The line each parsed term starts on (terms are plain data; their lines are kept beside them). */
const LINES = new WeakMap<ErlTerm, number>();

/** The line a term read by parseErlangTerms starts on. */
export function lineOf(term: ErlTerm): number | undefined {
  return LINES.get(term);
}
const ESCAPES: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t', v: '\v', b: '\b', f: '\f', e: '\x1b', s: ' ', d: '\x7f', '\\': '\\', '"': '"', "'": "'" };

class Reader {
  pos = 0;
  constructor(
    readonly text: string,
    readonly file: string,
  ) {}

  #lineStarts: number[] | undefined;

  lineAt(at: number): { line: number; column: number } {
    if (!this.#lineStarts) {
      this.#lineStarts = [0];
      for (let i = 0; i < this.text.length; i++) if (this.text[i] === '\n') this.#lineStarts.push(i + 1);
    }
    const starts = this.#lineStarts;
    let lo = 0;
    let hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid]! <= at) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: at - starts[lo]! + 1 };
  }

  fail(reason: string, at = this.pos): never {
    const { line, column } = this.lineAt(at);
    throw new ErlangSyntaxError(this.file, line, column, reason);
  }

  skip(): void {
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined) return;
      if (c === '%') {
        const nl = this.text.indexOf('\n', this.pos);
        this.pos = nl === -1 ? this.text.length : nl + 1;
      } else if (/\s/.test(c)) this.pos++;
      else return;
    }
  }

  peek(): string | undefined {
    this.skip();
    return this.text[this.pos];
  }

  expect(token: string): void {
    this.skip();
    if (!this.text.startsWith(token, this.pos)) {
      this.fail(`expected '${token}'${this.pos < this.text.length ? `, found '${this.text[this.pos]}'` : ' before the end of the file'}`);
    }
    this.pos += token.length;
  }

  term(depth: number): ErlTerm {
    this.skip();
    const start = this.pos;
    const term = this.bareTerm(depth);
    LINES.set(term, this.lineAt(start).line);
    return term;
  }

  bareTerm(depth: number): ErlTerm {
    if (depth > MAX_DEPTH) this.fail(`terms nested deeper than ${MAX_DEPTH}`);
    const c = this.peek();
    if (c === undefined) this.fail('expected a term before the end of the file');
    if (c === '{') return { kind: 'tuple', items: this.sequence('{', '}', depth) };
    if (c === '[') return this.list(depth);
    if (c === '#' && this.text[this.pos + 1] === '{') return this.map(depth);
    if (c === '"') return { kind: 'string', value: this.strings() };
    if (c === "'") return { kind: 'atom', value: this.quoted("'") };
    if (c === '<' && this.text[this.pos + 1] === '<') return this.binary();
    if (c === '$') return this.char();
    if (c === '-' || c === '+' || (c >= '0' && c <= '9')) return this.number();
    const m = /^[a-z][A-Za-z0-9_@]*/.exec(this.text.slice(this.pos, this.pos + 1024));
    if (m) {
      this.pos += m[0].length;
      return { kind: 'atom', value: m[0] };
    }
    if (/^[A-Z_]/.test(c)) this.fail(`a variable ('${/^[A-Za-z0-9_]+/.exec(this.text.slice(this.pos))![0]}') is not a term: quote it to make an atom`);
    this.fail(`unexpected '${c}'`);
  }

  sequence(open: string, close: string, depth: number): ErlTerm[] {
    this.expect(open);
    const items: ErlTerm[] = [];
    if (this.peek() === close) {
      this.pos++;
      return items;
    }
    for (;;) {
      items.push(this.term(depth + 1));
      const c = this.peek();
      if (c === ',') this.pos++;
      else if (c === close) {
        this.pos++;
        return items;
      } else this.fail(c === undefined ? `expected '${close}' before the end of the file` : `expected ',' or '${close}', found '${c}'`);
    }
  }

  list(depth: number): ErlTerm {
    this.expect('[');
    const items: ErlTerm[] = [];
    if (this.peek() === ']') {
      this.pos++;
      return { kind: 'list', items };
    }
    for (;;) {
      items.push(this.term(depth + 1));
      const c = this.peek();
      if (c === ',') this.pos++;
      else if (c === '|') {
        this.pos++;
        const tail = this.term(depth + 1);
        this.expect(']');
        if (tail.kind === 'list') return { kind: 'list', items: [...items, ...tail.items] };
        if (tail.kind === 'string') return { kind: 'list', items: [...items, ...[...tail.value].map((ch) => ({ kind: 'integer', value: ch.codePointAt(0)! }) as const)] };
        this.fail('an improper list (its tail is not a list) is not supported');
      } else if (c === ']') {
        this.pos++;
        return { kind: 'list', items };
      } else this.fail(c === undefined ? "expected ']' before the end of the file" : `expected ',' or ']', found '${c}'`);
    }
  }

  map(depth: number): ErlTerm {
    this.pos++; // '#'
    this.expect('{');
    const entries: Array<[ErlTerm, ErlTerm]> = [];
    if (this.peek() === '}') {
      this.pos++;
      return { kind: 'map', entries };
    }
    for (;;) {
      const key = this.term(depth + 1);
      this.expect('=>');
      entries.push([key, this.term(depth + 1)]);
      const c = this.peek();
      if (c === ',') this.pos++;
      else if (c === '}') {
        this.pos++;
        return { kind: 'map', entries };
      } else this.fail(`expected ',' or '}' in a map, found '${c ?? 'the end of the file'}'`);
    }
  }

  /** One or more adjacent "strings", joined as Erlang does. */
  strings(): string {
    let value = this.quoted('"');
    while (this.peek() === '"') value += this.quoted('"');
    return value;
  }

  quoted(quote: string): string {
    const start = this.pos;
    this.pos++;
    let out = '';
    for (;;) {
      const c = this.text[this.pos];
      if (c === undefined) this.fail(`unfinished ${quote === '"' ? 'string' : 'quoted atom'}`, start);
      this.pos++;
      if (c === quote) return out;
      if (c !== '\\') {
        out += c;
        continue;
      }
      const e = this.text[this.pos];
      if (e === undefined) this.fail('unfinished escape', start);
      if (e in ESCAPES) {
        out += ESCAPES[e];
        this.pos++;
      } else if (/[0-7]/.test(e)) {
        const digits = /^[0-7]{1,3}/.exec(this.text.slice(this.pos))![0];
        out += String.fromCodePoint(parseInt(digits, 8));
        this.pos += digits.length;
      } else if (e === 'x') {
        const m = /^x(?:\{([0-9A-Fa-f]+)\}|([0-9A-Fa-f]{2}))/.exec(this.text.slice(this.pos));
        if (!m) this.fail("escape '\\x' needs two hexadecimal digits or {digits}");
        const code = parseInt(m[1] ?? m[2]!, 16);
        if (code > 0x10ffff) this.fail('escape beyond Unicode');
        out += String.fromCodePoint(code);
        this.pos += m[0].length;
      } else if (e === '^') {
        const ch = this.text[this.pos + 1];
        if (!ch) this.fail('unfinished escape', start);
        out += String.fromCharCode(ch.charCodeAt(0) % 32);
        this.pos += 2;
      } else {
        // Erlang keeps an unknown escaped character as itself.
        out += e;
        this.pos++;
      }
    }
  }

  binary(): ErlTerm {
    this.pos += 2;
    if (this.peek() === '>' && this.text[this.pos + 1] === '>') {
      this.pos += 2;
      return { kind: 'binary', value: '' };
    }
    let value = '';
    for (;;) {
      const c = this.peek();
      if (c === '"') {
        value += this.strings();
        // <<"text"/utf8>>
        if (this.peek() === '/') {
          const m = /^\/(utf8|binary)/.exec(this.text.slice(this.pos));
          if (!m) this.fail('only /utf8 and /binary segments are supported');
          this.pos += m[0].length;
        }
      } else if (c !== undefined && /[0-9]/.test(c)) {
        const m = /^[0-9]+/.exec(this.text.slice(this.pos))!;
        const byte = Number(m[0]);
        if (byte > 255) this.fail('a byte segment must be 0 to 255');
        value += String.fromCharCode(byte);
        this.pos += m[0].length;
      } else this.fail(`unexpected '${c ?? 'end of file'}' in a binary`);
      const sep = this.peek();
      if (sep === ',') this.pos++;
      else if (sep === '>' && this.text[this.pos + 1] === '>') {
        this.pos += 2;
        return { kind: 'binary', value };
      } else this.fail(`expected ',' or '>>' in a binary, found '${sep ?? 'the end of the file'}'`);
    }
  }

  char(): ErlTerm {
    this.pos++;
    const c = this.text[this.pos];
    if (c === undefined) this.fail('a character ($) at the end of the file');
    if (c === '\\') {
      const e = this.text[this.pos + 1] ?? '';
      if (e in ESCAPES) {
        this.pos += 2;
        return { kind: 'integer', value: ESCAPES[e]!.codePointAt(0)! };
      }
      this.fail(`unsupported character escape '$\\${e}'`);
    }
    const ch = String.fromCodePoint(c.codePointAt(0)!);
    this.pos += ch.length;
    return { kind: 'integer', value: ch.codePointAt(0)! };
  }

  number(): ErlTerm {
    const m = /^[-+]?\s*(?:([0-9]{1,2})#([0-9A-Za-z]+)|([0-9][0-9_]*)(\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?)?)/.exec(this.text.slice(this.pos, this.pos + 512));
    if (!m) this.fail('expected a number');
    this.pos += m[0].length;
    const sign = m[0].startsWith('-') ? -1 : 1;
    if (m[1]) {
      const base = Number(m[1]);
      if (base < 2 || base > 36) this.fail(`base ${base} is not 2 to 36`);
      const value = parseInt(m[2]!, base);
      if (Number.isNaN(value) || value.toString(base) !== m[2]!.toLowerCase().replace(/^0+(?=.)/, '')) this.fail(`'${m[2]}' is not a base-${base} number`);
      return { kind: 'integer', value: sign * value };
    }
    const digits = m[3]!.replace(/_/g, '');
    if (m[4]) return { kind: 'float', value: sign * Number(digits + m[4].replace(/_/g, '')) };
    return { kind: 'integer', value: sign * Number(digits) };
  }
}

/** Reads every `Term.` of a file, as file:consult does. */
export function parseErlangTerms(text: string, file = '<text>'): LocatedTerm[] {
  const reader = new Reader(text, file);
  const terms: LocatedTerm[] = [];
  while (reader.peek() !== undefined) {
    const start = reader.pos;
    const term = reader.term(0);
    reader.skip();
    if (reader.text[reader.pos] !== '.') reader.fail(`expected '.' after the term that starts at line ${reader.lineAt(start).line}`);
    reader.pos++;
    terms.push({ term, line: reader.lineAt(start).line });
  }
  return terms;
}

/** A term written back in Erlang syntax (for messages). */
export function formatTerm(term: ErlTerm): string {
  switch (term.kind) {
    case 'atom':
      return /^[a-z][A-Za-z0-9_@]*$/.test(term.value) ? term.value : `'${term.value.replace(/[\\']/g, (c) => `\\${c}`)}'`;
    case 'string':
      return JSON.stringify(term.value);
    case 'binary':
      return `<<${JSON.stringify(term.value)}>>`;
    case 'integer':
    case 'float':
      return String(term.value);
    case 'tuple':
      return `{${term.items.map(formatTerm).join(', ')}}`;
    case 'list':
      return `[${term.items.map(formatTerm).join(', ')}]`;
    case 'map':
      return `#{${term.entries.map(([k, v]) => `${formatTerm(k)} => ${formatTerm(v)}`).join(', ')}}`;
  }
}
