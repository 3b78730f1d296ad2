/**
 * What other modules import of mod_privacy (`@service/mod_privacy/api`): the privacy service's reference
 * and type, no code of the module. The admin command privacy_set gets the running service with
 * `ctx.find(privacyService)`.
 */
import { createServiceRef, type XmlElement } from '@service/plugin-api';

export interface PrivacyApi {
  /**
   * Applies a jabber:iq:privacy <query/> to an account as if one of its clients had sent it, but without
   * a session (so <active/> is a bad-request): list changes are pushed to its resources. Resolves with
   * the result payload of a get (nothing for a set); throws a StanzaError with the condition a client
   * would get.
   */
  apply(user: string, host: string, type: 'get' | 'set', query: XmlElement): Promise<XmlElement | undefined>;
}

export const privacyService = createServiceRef<PrivacyApi>({ id: 'mod_privacy.privacy', provider: 'mod_privacy' });
