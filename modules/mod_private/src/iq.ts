/**
 * jabber:iq:private (XEP-0049): a client stores and reads back XML on its own account. Another account's
 * data is <forbidden/> (the XEP prefers it to service-unavailable). While PEP runs, bookmarks written here
 * are published to PEP as well (bookmarks-sync.ts).
 */
import { StanzaError, x, type IqContext, type IqHandlerRegistration, type XmlElement } from '@service/plugin-api';
import { NS_PRIVATE, type NamespacePolicy } from './namespaces.js';
import type { BookmarksSync } from './bookmarks-sync.js';
import type { PrivateStore } from './store.js';

export function privateIqHandlers(store: PrivateStore, policy: NamespacePolicy, bookmarks: BookmarksSync | undefined): IqHandlerRegistration[] {
  return [
    { type: 'get', ns: NS_PRIVATE, name: 'query', to: 'account', handler: (ctx) => get(store, policy, ctx) },
    { type: 'set', ns: NS_PRIVATE, name: 'query', to: 'account', handler: (ctx) => set(store, policy, ctx, bookmarks) },
  ];
}

function ownAccount(ctx: IqContext): { user: string; host: string } {
  if (!ctx.self) throw new StanzaError('forbidden', 'private storage is readable and writable by its own account only');
  return { user: ctx.to.user!, host: ctx.to.host };
}

async function get(store: PrivateStore, policy: NamespacePolicy, ctx: IqContext): Promise<XmlElement> {
  const account = ownAccount(ctx);
  const asked = ctx.payload.elements();
  // XEP-0049: a get names exactly one namespace; none is "Bad Format".
  if (asked.length !== 1) throw new StanzaError('bad-request', 'ask for exactly one element, in the namespace of the data');
  const element = asked[0]!;
  const problem = policy.problem(element);
  if (problem) throw new StanzaError('not-acceptable', problem);
  const stored = await store.get(account, element.ns!);
  return x('query', { xmlns: NS_PRIVATE }, stored ?? x(element.local, { xmlns: element.ns }));
}

async function set(store: PrivateStore, policy: NamespacePolicy, ctx: IqContext, bookmarks: BookmarksSync | undefined): Promise<void> {
  const account = ownAccount(ctx);
  // XEP-0049 lets a set carry several elements, each stored under its own namespace.
  const elements = ctx.payload.elements();
  if (elements.length === 0) throw new StanzaError('not-acceptable', 'the query holds no element to store');
  for (const element of elements) {
    const problem = policy.problem(element);
    if (problem) throw new StanzaError('not-acceptable', problem);
  }
  await store.set(account, elements);
  await bookmarks?.privateWritten(account, elements);
}
