#pragma once

// Each unit stands for a part of a GPU project's host code. The interface is plain, so
// main.cpp, the unit the tests change, compiles in a fraction of the others' time.
int count_flags(int argc, char **argv);
double reduce_max(const double *values, int n);
int schedule(int task, int tasks, int workers);
double report_mean(const double *values, int n);
