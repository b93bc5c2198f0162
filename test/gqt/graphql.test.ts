import { describeGqtPass } from '../support/gqt-suite.js';

await describeGqtPass({ via: 'graphql', store: 'fs', servers: 'in-process' });
