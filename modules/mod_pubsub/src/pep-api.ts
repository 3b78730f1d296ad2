/**
 * The PEP service other modules use (`pepService`, public-api.ts), on the same Pep as clients: a module
 * acts as the account itself, with the same auto-creation, preconditions and notifications.
 */
import { Jid, StanzaError, type XmlElement } from '@service/plugin-api';
import { keyName } from './names.js';
import type { Pep } from './pep.js';
import type { PepApi, PepItem, PublishOptions } from './public-api.js';

function optionFields(options: PublishOptions | undefined): Map<string, string[]> {
  const fields = new Map<string, string[]>();
  for (const [name, value] of Object.entries(options ?? {})) fields.set(name, typeof value === 'string' ? [value] : [...value]);
  return fields;
}

export function pepApi(pep: Pep): PepApi {
  return {
    publish: (account: string, node: string, payload: XmlElement, options?: { itemId?: string; publishOptions?: PublishOptions }) => {
      const owner = Jid.parse(account).toBare();
      const itemId = options?.itemId === undefined ? undefined : keyName('item id', options.itemId);
      return pep.publish(owner, owner, { node: keyName('node', node), itemId, payload, options: optionFields(options?.publishOptions) });
    },
    items: async (account: string, node: string, max?: number): Promise<PepItem[] | undefined> => {
      const owner = Jid.parse(account).toBare();
      try {
        const { items } = await pep.items(owner, owner, node, max === undefined ? {} : { max });
        return items.map((i) => ({ id: i.itemId, payload: i.item.elements()[0], publisher: i.publisher, publishedAt: i.updatedAt }));
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    retract: async (account: string, node: string, itemId: string) => {
      const owner = Jid.parse(account).toBare();
      try {
        await pep.retract(owner, owner, node, itemId, undefined);
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },
    deleteNode: async (account: string, node: string) => {
      const owner = Jid.parse(account).toBare();
      try {
        await pep.deleteNode(owner, owner, node);
        return true;
      } catch (err) {
        if (isNotFound(err)) return false;
        throw err;
      }
    },
  };
}

function isNotFound(err: unknown): boolean {
  return err instanceof StanzaError && err.condition === 'item-not-found';
}
