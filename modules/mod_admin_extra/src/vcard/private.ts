/**
 * Private XML storage (mod_private, XEP-0049): private_get, private_set. The same data a client reads and
 * writes with jabber:iq:private on its own account: one element per namespace.
 */
import { ParseError, badArgument, defineCommand, parseElement, toStoredXml, x, type HandlersFor, type XmlElement } from '@service/plugin-api';
import { privateStorageService } from '@service/mod_private/api';
import { host, user } from '../args.js';
import { need, type AdminContext } from '../context.js';
import { existingAccount } from '../lookup.js';

/** An XML name without a prefix: a prefix would need a declaration the answer cannot carry. */
const ELEMENT_NAME = /^[\p{L}_][\p{L}\p{N}._-]*$/u;

const EXAMPLE_ELEMENT = "<storage xmlns='storage:rosternotes'><note jid='user2@myserver.com'>Met at the conference</note></storage>";

export const privateCommands = [
  defineCommand({
    name: 'private_get',
    tags: ['private'],
    desc: 'Get some information from a user private storage',
    longdesc:
      'Answers, as XML text, the element the account keeps in private storage under the namespace `ns` — what a client gets with a jabber:iq:private get. ' +
      'As in XEP-0049, data is found by its namespace: the stored element is answered whatever `element` says. When nothing is stored there, the answer is the empty element `<element xmlns=\'ns\'/>`. ' +
      'Fails with 404 when the account does not exist, with 400 when the host is not served here, `element` is not an XML name, or `ns` is empty or reserved (jabber:iq:private, jabber:client…).',
    args: [
      user,
      host,
      { name: 'element', type: 'string', desc: 'Element name', example: 'storage' },
      { name: 'ns', type: 'string', desc: 'Namespace', example: 'storage:rosternotes' },
    ],
    result: { name: 'res', type: 'string', desc: 'The stored element, as XML' },
    examples: [{ args: { user: 'user1', host: 'myserver.com', element: 'storage', ns: 'storage:rosternotes' }, result: EXAMPLE_ELEMENT }],
  }),
  defineCommand({
    name: 'private_set',
    tags: ['private'],
    desc: 'Set to the user private storage',
    longdesc:
      'Stores the element in the account\'s private storage under its namespace, replacing what that namespace held — what a client does with a jabber:iq:private set. ' +
      'Fails with 404 when the account does not exist, and with 400, changing nothing, when the host is not served here, the text is not one well-formed XML element (the message says what is wrong), ' +
      'or the element has no namespace of its own or a reserved one (jabber:iq:private, jabber:client…).',
    args: [user, host, { name: 'element', type: 'string', desc: 'XML storage element', example: EXAMPLE_ELEMENT }],
    result: { name: 'res', type: 'rescode' },
    examples: [{ args: { user: 'user1', host: 'myserver.com', element: EXAMPLE_ELEMENT }, result: 0 }],
  }),
] as const;

function parseStorageElement(text: string): XmlElement {
  try {
    return parseElement(text);
  } catch (err) {
    if (err instanceof ParseError) throw badArgument('element', `argument 'element' is not one well-formed XML element: ${err.message}`);
    throw err;
  }
}

export function privateHandlers(ctx: AdminContext): HandlersFor<typeof privateCommands> {
  const storage = (command: string) => need(ctx, privateStorageService, command);
  const refuse = (problem: string) =>
    badArgument('element', `argument 'element': ${problem}; private storage keeps an element under a namespace of its own, such as ${EXAMPLE_ELEMENT.replace(/>.*/, '/>')}`);

  return {
    private_get: async (args) => {
      const api = storage('private_get');
      if (!ELEMENT_NAME.test(args.element)) throw badArgument('element', `argument 'element' must be an XML element name without a prefix, got '${args.element}'`);
      if (!args.ns.trim()) throw badArgument('ns', "argument 'ns' is empty: data in private storage is found by its namespace");
      const asked = x(args.element, { xmlns: args.ns });
      const problem = api.problem(asked);
      if (problem) throw badArgument('ns', `argument 'ns': ${problem}`);
      const account = await existingAccount(ctx, args.user, args.host);
      return toStoredXml(await api.getOrEmpty(account.user, account.host, args.element, args.ns));
    },
    private_set: async (args) => {
      const api = storage('private_set');
      const element = parseStorageElement(args.element);
      const problem = api.problem(element);
      if (problem) throw refuse(problem);
      const account = await existingAccount(ctx, args.user, args.host);
      await api.set(account.user, account.host, element);
    },
  };
}
