import { describeGqtPass } from '../support/gqt-suite.js';

await describeGqtPass({ via: 'rest', store: 'fs', servers: 'in-process' });
