/** mod_carboncopy: Message carbons (XEP-0280). (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_carboncopy',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Message carbons (XEP-0280)',
  start() {
    return {};
  },
});
