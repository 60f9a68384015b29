/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cmds.h -- entry points of the ljsnap subcommands.
 */
#ifndef LJSNAP_CMDS_H
#define LJSNAP_CMDS_H

int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_doctor(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_archive(int argc, char **argv);

#endif
