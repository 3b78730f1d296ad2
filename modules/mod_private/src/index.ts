/** mod_private: Private XML storage (XEP-0049). (Being written.) */
import { defineModule } from '@service/kernel';

export default defineModule({
  name: 'mod_private',
  version: '0.1.0',
  kernel: '^0.1.0',
  summary: 'Private XML storage (XEP-0049)',
  start() {
    return {};
  },
});
