/**
 * Reading a MAM query (XEP-0313 §4): the data form's filters (with, start, end, and the #extended
 * before-id, after-id and ids) and the XEP-0059 <set/> (max, after, before, the empty <before/> of the
 * last page), plus <flip-page/>. A value that does not read is a bad-request naming its field; the form
 * offered to clients (form discovery) is built here too, from the same list of fields.
 */
import { Jid, StanzaError, x, type XmlElement } from '@service/plugin-api';
import { NS_DATA, NS_MAM, NS_RSM } from './ns.js';

export interface QueryRequest {
  readonly queryId: string | undefined;
  readonly with?: Jid;
  readonly start?: number;
  readonly end?: number;
  readonly beforeId?: string;
  readonly afterId?: string;
  readonly ids?: readonly string[];
  /** Asked page size (before capping). */
  readonly max?: number;
  /** RSM <after>id</after>. */
  readonly after?: string;
  /** RSM <before>: '' for the last page, an id for the page before it, undefined when absent. */
  readonly before?: string;
  readonly flip: boolean;
}

const FIELDS: ReadonlyArray<{ readonly name: string; readonly type: string; readonly label: string }> = [
  { name: 'with', type: 'jid-single', label: 'Messages with this JID (bare: every resource)' },
  { name: 'start', type: 'text-single', label: 'Messages at or after this time (XEP-0082)' },
  { name: 'end', type: 'text-single', label: 'Messages at or before this time (XEP-0082)' },
  { name: 'before-id', type: 'text-single', label: 'Messages before this archive id' },
  { name: 'after-id', type: 'text-single', label: 'Messages after this archive id' },
  { name: 'ids', type: 'text-multi', label: 'These archive ids only' },
];

/** The form of form discovery (§5.1). */
export function queryForm(): XmlElement {
  return x(
    'query',
    { xmlns: NS_MAM },
    x(
      'x',
      { xmlns: NS_DATA, type: 'form' },
      x('field', { type: 'hidden', var: 'FORM_TYPE' }, x('value', {}, NS_MAM)),
      ...FIELDS.map((f) => x('field', { type: f.type, var: f.name, label: f.label })),
    ),
  );
}

const bad = (text: string) => new StanzaError('bad-request', text, 'modify');

/** XEP-0082 date-time, with its zone: ms since the epoch. */
function dateTime(field: string, text: string): number {
  const ok = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(text.trim());
  const ms = ok ? Date.parse(text.trim()) : NaN;
  if (Number.isNaN(ms)) throw bad(`'${field}': '${text}' is not a XEP-0082 date-time (like 2010-06-07T00:00:00Z)`);
  return ms;
}

function single(field: XmlElement, name: string): string {
  const values = field.getChildren('value');
  if (values.length !== 1) throw bad(`'${name}' takes one value, got ${values.length}`);
  return values[0]!.text();
}

export function parseQuery(query: XmlElement): QueryRequest {
  const request: { -readonly [K in keyof QueryRequest]: QueryRequest[K] } = { queryId: query.attr('queryid'), flip: query.getChild('flip-page') !== undefined };
  const form = query.getChild('x', NS_DATA);
  if (form) {
    for (const field of form.getChildren('field')) {
      const name = field.attr('var') ?? '';
      switch (name) {
        case 'FORM_TYPE': {
          const value = single(field, name);
          if (value !== NS_MAM) throw bad(`'FORM_TYPE': expected ${NS_MAM}, got '${value}'`);
          break;
        }
        case 'with': {
          const jid = Jid.tryParse(single(field, name).trim());
          if (!jid) throw bad(`'with': '${single(field, name)}' is not a valid JID`);
          request.with = jid;
          break;
        }
        case 'start':
          request.start = dateTime(name, single(field, name));
          break;
        case 'end':
          request.end = dateTime(name, single(field, name));
          break;
        case 'before-id':
          request.beforeId = single(field, name);
          break;
        case 'after-id':
          request.afterId = single(field, name);
          break;
        case 'ids':
          request.ids = field.getChildren('value').map((v) => v.text());
          break;
        default:
          // §4.1.1: a field the server does not support is refused rather than silently ignored.
          throw bad(`'${name}': not a field of ${NS_MAM} (fields: ${FIELDS.map((f) => f.name).join(', ')})`);
      }
    }
  }
  const set = query.getChild('set', NS_RSM);
  if (set) {
    const max = set.getChildText('max');
    if (max !== undefined) {
      if (!/^\d+$/.test(max.trim())) throw bad(`'max': '${max}' is not a non-negative integer`);
      request.max = Number(max.trim());
    }
    const afterEl = set.getChild('after');
    if (afterEl) {
      if (!afterEl.text()) throw bad(`'after': an empty <after/> names no item`);
      request.after = afterEl.text();
    }
    const beforeEl = set.getChild('before');
    if (beforeEl) request.before = beforeEl.text();
    if (request.after !== undefined && request.before !== undefined) throw bad(`'before' and 'after' cannot be used together`);
  }
  return request;
}
