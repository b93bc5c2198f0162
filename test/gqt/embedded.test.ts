import { describeGqtPass } from '../support/gqt-suite.js';

await describeGqtPass({ via: 'embedded', store: 'memory' });
