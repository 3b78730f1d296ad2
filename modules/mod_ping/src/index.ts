/** mod_ping: XMPP ping (XEP-0199). (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_ping',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'XMPP ping (XEP-0199)',
  start() {
    return {};
  },
});
