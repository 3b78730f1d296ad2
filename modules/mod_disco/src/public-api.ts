/**
 * What other modules import of mod_disco (`@service/mod_disco/api`): the service that lists items in the
 * server's disco#items, its reference and types, no code of the module. Named for items so as not to be
 * taken for the plugin API's DiscoApi (the features and identities every module registers).
 */
import { createServiceRef } from '@service/plugin-api';
import type { AccountDiscoProvider, DiscoItemsProvider } from './items.js';

export type { AccountDiscoProvider, DiscoItem, DiscoItemsProvider } from './items.js';

export interface DiscoItemsApi {
  /**
   * Lists items in the server's disco#items (per host); returns the function that removes them. A consumer
   * removes them when it stops; when mod_disco restarts, its consumers restart and add them again.
   */
  addServerItems(provider: DiscoItemsProvider): () => void;
  /**
   * Answers disco about accounts (PEP nodes): asked only for requesters that XEP-0030 §8 lets discover the
   * account; returns the function that removes the provider, as addServerItems.
   */
  addAccountItems(provider: AccountDiscoProvider): () => void;
}

export const discoItemsService = createServiceRef<DiscoItemsApi>({ id: 'mod_disco.items', provider: 'mod_disco' });
