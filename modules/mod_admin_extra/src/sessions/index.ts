/**
 * Sessions and presence (connected_users_info, user_sessions_info, connected_users_vhost, num_resources, resource_num, kick_session, get_presence, set_presence, status_list*, status_num*) and stanzas (send_message, send_stanza, send_stanza_c2s, privacy_set).
 */
import type { HandlersFor } from '@service/kernel';
import type { AdminContext } from '../context.js';

export const sessionCommands = [] as const;

export function sessionHandlers(_ctx: AdminContext): HandlersFor<typeof sessionCommands> {
  return {} as HandlersFor<typeof sessionCommands>;
}
