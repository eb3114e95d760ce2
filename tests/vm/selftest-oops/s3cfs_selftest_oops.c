// SPDX-License-Identifier: GPL-2.0
/*
 * A deliberately broken module for the harness self-test
 * (tests/run.sh --selftest-harness): loading it must make the VM run fail.
 * mode=warn: WARN_ON(1) and load; mode=bug: BUG() in init (an oops);
 * mode=clean: load quietly (the control: the same run must pass).
 */
#include <linux/bug.h>
#include <linux/module.h>
#include <linux/string.h>

static char *mode = "warn";
module_param(mode, charp, 0444);
MODULE_PARM_DESC(mode, "warn, bug or clean");

static int __init s3cfs_selftest_oops_init(void)
{
	pr_info("s3cfs_selftest_oops: mode=%s\n", mode);
	if (!strcmp(mode, "warn"))
		WARN_ON(1);
	else if (!strcmp(mode, "bug"))
		BUG();
	return 0;
}

static void __exit s3cfs_selftest_oops_exit(void)
{
}

module_init(s3cfs_selftest_oops_init);
module_exit(s3cfs_selftest_oops_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("s3cachefs test harness self-test: a module that warns or oopses on load");
