/** mod_presence: Presence (RFC 6121): broadcast to subscribers, probes, directed presence, unavailable on disconnect. (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_presence',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Presence (RFC 6121): broadcast to subscribers, probes, directed presence, unavailable on disconnect',
  start() {
    return {};
  },
});
