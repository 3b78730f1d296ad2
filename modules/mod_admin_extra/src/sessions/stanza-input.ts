/**
 * Stanzas and JIDs given as command arguments. A stanza is parsed by the kernel's hardened parser (the
 * one client streams use: no DTD, entity or size tricks) and must be a message, presence or IQ a client
 * could send, with a valid type: the command refuses anything else with bad_argument, before anything
 * is sent.
 */
import { DEFAULT_LIMITS, InvalidJid, Jid, NS, ParseError, badArgument, parseElement, type XmlElement } from '@service/plugin-api';

const TYPES: Readonly<Record<string, readonly string[]>> = {
  message: ['normal', 'chat', 'groupchat', 'headline', 'error'],
  presence: ['unavailable', 'subscribe', 'subscribed', 'unsubscribe', 'unsubscribed', 'probe', 'error'],
  iq: ['get', 'set', 'result', 'error'],
};

/** A stanza argument: one <message/>, <presence/> or <iq/> in jabber:client (or no namespace). */
export function stanzaArg(argument: string, text: string): XmlElement {
  const element = xmlArg(argument, text);
  const allowed = TYPES[element.name];
  if (!allowed || (element.ns !== undefined && element.ns !== NS.CLIENT)) {
    throw badArgument(argument, `${argument} must be a <message/>, <presence/> or <iq/> in ${NS.CLIENT}, got <${element.name}${element.ns ? ` xmlns='${element.ns}'` : ''}>`);
  }
  const type = element.attr('type');
  if (element.name === 'iq') {
    if (!element.attr('id') || type === undefined) throw badArgument(argument, 'an <iq/> needs an id and a type (get, set, result or error)');
  }
  if (type !== undefined && !allowed.includes(type)) throw badArgument(argument, `a <${element.name}/> of type '${type}' does not exist: the types are ${allowed.join(', ')}`);
  return element;
}

/** Any one XML element, with the parse error in the message. */
export function xmlArg(argument: string, text: string): XmlElement {
  try {
    return parseElement(text);
  } catch (err) {
    if (err instanceof ParseError) throw badArgument(argument, `${argument} is not one valid XML element: ${err.message}`);
    throw err;
  }
}

/** A JID argument, normalized. */
export function jidArg(argument: string, text: string): Jid {
  try {
    return Jid.parse(text);
  } catch (err) {
    if (err instanceof InvalidJid) throw badArgument(argument, `${argument}: '${text}' is not a valid JID: ${err.message}`);
    throw err;
  }
}

/**
 * A stanza built from arguments (send_message's subject and body) is held to the limit a parsed stanza
 * argument has: what a client could not send, or receive, the API does not send either.
 */
export function checkBuiltSize(argument: string, stanza: XmlElement): void {
  const size = Buffer.byteLength(stanza.toString());
  if (size > DEFAULT_LIMITS.maxStanzaSize) {
    throw badArgument(argument, `the message would be ${size} bytes, larger than the server's stanza limit of ${DEFAULT_LIMITS.maxStanzaSize} bytes`);
  }
}
