/**
 * create_room_with_opts' options, read into a RoomCreation before the room exists: every room option is
 * checked (name and value), and the two list options are parsed. Since ejabberd 25.03 (API version 4
 * here) `affiliations` is `Type1=JID1;Type2=JID2` and `subscribers` is `JID1=Nick1=NodeA=NodeB;JID2=Nick2`:
 * tuples separated by `;`, elements by `=`. Before (API versions 0 to 3, up to ejabberd 24.12) the
 * separators were `,` and `:`; since a node name has colons itself (urn:xmpp:mucsub:nodes:messages), the
 * old form's nodes are read by recognizing that prefix (a short name, `messages`, works in both forms).
 */
import { badArgument } from '@service/plugin-api';
import { MUCSUB_NODES, type Affiliation, type RoomCreation, type RoomOptionName, type RoomOptions } from '@service/mod_muc/api';
import { bareJidArg } from '../lookup.js';
import { optionName, optionValue } from './option-text.js';

export interface Separators {
  /** Between tuples. */
  readonly tuple: string;
  /** Between the elements of a tuple. */
  readonly element: string;
}

export const SEPARATORS_25_03: Separators = { tuple: ';', element: '=' };
export const SEPARATORS_24_12: Separators = { tuple: ',', element: ':' };

const AFFILIATIONS: readonly Affiliation[] = ['owner', 'admin', 'member', 'outcast', 'none'];
const NODE_PREFIX = 'urn:xmpp:mucsub:nodes:';
const ARGUMENT = 'options';

/** The options list of create_room_with_opts as a RoomCreation (host added by the caller). */
export function readCreationOptions(options: ReadonlyArray<{ name: string; value: string }>, separators: Separators): RoomCreation {
  const seen = new Set<string>();
  const roomOptions: Partial<Record<RoomOptionName, RoomOptions[RoomOptionName]>> = {};
  let affiliations: Array<{ jid: string; affiliation: Affiliation }> | undefined;
  let subscribers: Array<{ jid: string; nick: string; nodes: string[] }> | undefined;
  for (const { name, value } of options) {
    if (seen.has(name)) throw badArgument(ARGUMENT, `option ${name} is given twice`);
    seen.add(name);
    if (name === 'affiliations') affiliations = readAffiliations(value, separators);
    else if (name === 'subscribers') subscribers = readSubscribers(value, separators);
    else {
      const option = optionName(name, ARGUMENT);
      roomOptions[option] = optionValue(option, value, ARGUMENT);
    }
  }
  return {
    options: roomOptions as Partial<RoomOptions>,
    ...(affiliations ? { affiliations } : {}),
    ...(subscribers ? { subscribers } : {}),
  };
}

function tuples(text: string, separators: Separators): string[] {
  return text
    .split(separators.tuple)
    .map((tuple) => tuple.trim())
    .filter((tuple) => tuple !== '');
}

function readAffiliations(text: string, separators: Separators): Array<{ jid: string; affiliation: Affiliation }> {
  return tuples(text, separators).map((tuple) => {
    const at = tuple.indexOf(separators.element);
    const type = at < 0 ? '' : tuple.slice(0, at);
    const jid = at < 0 ? '' : tuple.slice(at + 1);
    if (at < 0 || !(AFFILIATIONS as readonly string[]).includes(type) || jid === '') {
      throw badArgument(ARGUMENT, `option affiliations: '${tuple}' is not Type${separators.element}JID with a type among ${AFFILIATIONS.join(', ')} (tuples are separated by '${separators.tuple}')`);
    }
    return { affiliation: type as Affiliation, jid: bareJidArg(ARGUMENT, jid) };
  });
}

function readSubscribers(text: string, separators: Separators): Array<{ jid: string; nick: string; nodes: string[] }> {
  return tuples(text, separators).map((tuple) => {
    const parts = tuple.split(separators.element);
    if (parts.length < 3 || parts[0] === '' || parts[1] === '') {
      throw badArgument(
        ARGUMENT,
        `option subscribers: '${tuple}' is not JID${separators.element}Nick${separators.element}Node… with at least one node (tuples are separated by '${separators.tuple}')`,
      );
    }
    const [jid, nick, ...rest] = parts as [string, string, ...string[]];
    return { jid: bareJidArg(ARGUMENT, jid), nick, nodes: readNodes(rest, separators) };
  });
}

/** Node names from a tuple's remaining elements; in the old form a full node name spans five of them. */
function readNodes(elements: readonly string[], separators: Separators): string[] {
  const nodes: string[] = [];
  for (let i = 0; i < elements.length; i++) {
    let name = elements[i]!;
    if (separators.element === ':' && name === 'urn' && elements.slice(i, i + 4).join(':') === 'urn:xmpp:mucsub:nodes') {
      name = elements.slice(i, i + 5).join(':');
      i += 4;
    }
    nodes.push(mucsubNode(name, ARGUMENT));
  }
  return [...new Set(nodes)];
}

/** A MUC/Sub node from its full name or its short one (`messages`); a 400 otherwise. */
export function mucsubNode(name: string, argument: string): string {
  const full = name.startsWith(NODE_PREFIX) ? name : `${NODE_PREFIX}${name}`;
  if (!(MUCSUB_NODES as readonly string[]).includes(full)) {
    throw badArgument(argument, `'${name}' is not a MUC/Sub node: the nodes are ${MUCSUB_NODES.join(', ')}`);
  }
  return full;
}
