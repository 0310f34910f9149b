/*
 * test.h - a minimal test harness. A test file defines `static void test_xxx(void)`
 * functions and a `main` that runs them with RUN(test_xxx) and returns
 * test_summary(). Failures print the file, line and the values compared; the
 * run ends with the plain summary line "N passed, N failed".
 */
#ifndef SG_TEST_H
#define SG_TEST_H

#include <stdio.h>
#include <string.h>

#include "util/util.h" /* sg_int, the allocation-failure hook: the tests are white-box */

static int test_passed_, test_failed_, test_cur_failed_;
static const char *test_cur_name_;

#define CHECK(cond) do { \
    if (!(cond)) { \
        fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__, __LINE__, test_cur_name_, #cond); \
        test_cur_failed_ = 1; \
    } } while (0)

#define CHECK_MSG(cond, ...) do { \
    if (!(cond)) { \
        fprintf(stderr, "%s:%d: %s: check failed: %s: ", __FILE__, __LINE__, test_cur_name_, #cond); \
        fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
        test_cur_failed_ = 1; \
    } } while (0)

#define CHECK_EQ_INT(a, b) do { \
    long long a_ = (long long)(a), b_ = (long long)(b); \
    if (a_ != b_) { \
        fprintf(stderr, "%s:%d: %s: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, \
                test_cur_name_, #a, #b, a_, b_); \
        test_cur_failed_ = 1; \
    } } while (0)

#define CHECK_EQ_STR(a, b) do { \
    const char *a_ = (a), *b_ = (b); \
    if (!a_ || !b_ || strcmp(a_, b_) != 0) { \
        fprintf(stderr, "%s:%d: %s: %s == %s failed: \"%s\" != \"%s\"\n", __FILE__, __LINE__, \
                test_cur_name_, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
        test_cur_failed_ = 1; \
    } } while (0)

#define RUN(fn) do { \
    test_cur_name_ = #fn; test_cur_failed_ = 0; \
    fn(); \
    if (test_cur_failed_) { test_failed_++; fprintf(stderr, "FAIL %s\n", #fn); } \
    else { test_passed_++; } \
    } while (0)

static inline int test_summary(void)
{
    printf("%d passed, %d failed\n", test_passed_, test_failed_);
    return test_failed_ ? 1 : 0;
}

#endif
