#!/usr/bin/env node
'use strict';
// The compiled CLI (npm ci runs `prepare`, which builds dist/).
require('../dist/src/cli/main.js').main(process.argv);
