/**
 * Sessions and presence (connected_users_info, user_sessions_info, connected_users_vhost, num_resources, resource_num, kick_session, get_presence, set_presence, status_list*, status_num*) and stanzas (send_message, send_stanza, send_stanza_c2s, privacy_set).
 */
import type { HandlersFor } from '@service/plugin-api';
import type { AdminContext } from '../context.js';
import { infoCommands, infoHandlers } from './info.js';
import { kickCommands, kickHandlers } from './kick.js';
import { presenceCommands, presenceHandlers } from './presence.js';
import { privacyCommands, privacyHandlers } from './privacy.js';
import { stanzaCommands, stanzaHandlers } from './stanza.js';
import { statusCommands, statusHandlers } from './status.js';

export const sessionCommands = [...infoCommands, ...kickCommands, ...presenceCommands, ...statusCommands, ...stanzaCommands, ...privacyCommands] as const;

export function sessionHandlers(ctx: AdminContext): HandlersFor<typeof sessionCommands> {
  // set_presence and status_list* have one handler per API version (`name@vN`), which HandlersFor,
  // keyed by name, cannot express: each part is typed against its own declarations instead.
  return {
    ...infoHandlers(ctx),
    ...kickHandlers(ctx),
    ...presenceHandlers(ctx),
    ...statusHandlers(ctx),
    ...stanzaHandlers(ctx),
    ...privacyHandlers(ctx),
  } as unknown as HandlersFor<typeof sessionCommands>;
}
