/**
 * Which elements private storage accepts (XEP-0049): a root element in a namespace of its own — not the
 * stanza namespaces, not jabber:iq:private itself (an element without xmlns inside the query inherits it).
 */
import type { XmlElement } from '@service/kernel';
import { MAX_NAMESPACE_LENGTH } from './migrations.js';

export const NS_PRIVATE = 'jabber:iq:private';

const RESERVED = new Set(['jabber:client', 'jabber:server', 'jabber:component:accept', NS_PRIVATE]);

/** Why the element cannot be stored or asked for, or undefined when it can. */
export function namespaceProblem(element: XmlElement): string | undefined {
  const ns = element.ns;
  if (!ns) return `<${element.local}/> has no namespace of its own`;
  if (RESERVED.has(ns)) return `the namespace ${ns} is reserved`;
  if ([...ns].length > MAX_NAMESPACE_LENGTH) return `namespaces longer than ${MAX_NAMESPACE_LENGTH} characters are not stored`;
  return undefined;
}
