/**
 * What the archive tests share: a MAM query from a real client that gathers its result messages and the
 * <fin/>, the same with an error expected, and the api caller of an admin. One place so that each test
 * file reads as the behaviour it checks.
 */
import { expect } from 'chai';
import type { TestServer } from '../support/server.js';
import { xml, type Client, type Element } from '../support/xmpp.js';

export { ADMIN, api, ok } from '../support/admin-api.js';
export const NS_MAM = 'urn:xmpp:mam:2';
export const NS_SID = 'urn:xmpp:sid:0';
export const NS_RSM = 'http://jabber.org/protocol/rsm';

export interface QueryOptions {
  with?: string;
  start?: string;
  end?: string;
  beforeId?: string;
  afterId?: string;
  ids?: string[];
  max?: number | string;
  after?: string;
  /** '' for the empty <before/> (the last page). */
  before?: string;
  flip?: boolean;
  /** Extra form fields, for refusals. */
  fields?: Array<[string, string]>;
  to?: string;
}

export interface QueryResult {
  /** The <result/> elements, in arrival order. */
  results: Element[];
  /** The archive ids of the results, in arrival order. */
  ids: string[];
  /** The bodies of the archived messages, in arrival order. */
  bodies: string[];
  fin: Element;
  complete: boolean;
  first?: string;
  firstIndex?: number;
  last?: string;
  count?: number;
}

export function queryElement(queryid: string, o: QueryOptions): Element {
  const fields: Element[] = [xml('field', { var: 'FORM_TYPE', type: 'hidden' }, xml('value', {}, NS_MAM))];
  const field = (name: string, ...values: string[]) => fields.push(xml('field', { var: name }, ...values.map((v) => xml('value', {}, v))));
  if (o.with !== undefined) field('with', o.with);
  if (o.start !== undefined) field('start', o.start);
  if (o.end !== undefined) field('end', o.end);
  if (o.beforeId !== undefined) field('before-id', o.beforeId);
  if (o.afterId !== undefined) field('after-id', o.afterId);
  if (o.ids !== undefined) field('ids', ...o.ids);
  for (const [name, value] of o.fields ?? []) field(name, value);
  const set: Element[] = [];
  if (o.max !== undefined) set.push(xml('max', {}, String(o.max)));
  if (o.after !== undefined) set.push(xml('after', {}, o.after));
  if (o.before !== undefined) set.push(o.before === '' ? xml('before') : xml('before', {}, o.before));
  return xml(
    'query',
    { xmlns: NS_MAM, queryid },
    xml('x', { xmlns: 'jabber:x:data', type: 'submit' }, ...fields),
    set.length ? xml('set', { xmlns: NS_RSM }, ...set) : undefined,
    o.flip ? xml('flip-page') : undefined,
  );
}

/** Runs a query; the results are the messages with this queryid that arrived before the IQ result. */
export async function mamQuery(client: Client, o: QueryOptions = {}): Promise<QueryResult> {
  const queryid = `q-${Math.random().toString(36).slice(2)}`;
  const results: Element[] = [];
  const onStanza = (s: Element) => {
    const result = s.is('message') ? s.getChild('result', NS_MAM) : undefined;
    if (result && result.attrs.queryid === queryid) results.push(result);
  };
  client.on('stanza', onStanza);
  try {
    const answer = await client.iqCaller.request(xml('iq', { type: 'set', ...(o.to ? { to: o.to } : {}) }, queryElement(queryid, o)), 30_000);
    const fin = answer.getChild('fin', NS_MAM)!;
    expect(fin, 'the IQ result has <fin/>').to.exist;
    const set = fin.getChild('set', NS_RSM);
    const first = set?.getChild('first');
    return {
      results,
      ids: results.map((r) => r.attrs.id as string),
      bodies: results.map((r) => r.getChild('forwarded')!.getChild('message')!.getChildText('body') ?? ''),
      fin,
      complete: fin.attrs.complete === 'true',
      first: first?.text(),
      firstIndex: first ? Number(first.attrs.index) : undefined,
      last: set?.getChild('last')?.text(),
      count: set?.getChild('count') ? Number(set.getChildText('count')) : undefined,
    };
  } finally {
    client.off('stanza', onStanza);
  }
}

/** The stanza error condition and text of a query the server refuses. */
export async function mamRefusal(client: Client, o: QueryOptions): Promise<{ condition: string; text: string }> {
  const err: any = await mamQuery(client, o).then(
    () => expect.fail('the query was answered'),
    (e) => e,
  );
  return { condition: err?.condition ?? err?.name, text: err?.text ?? '' };
}

