/*
 * z3fns.h - private to solver/: libz3, bound at the first Z3 context the library
 * makes (util/dynlib.h) rather than at every process start. Most checks never make
 * one (the presolve and the walks over the models decide them; terms stay outside
 * Z3 until a question needs it, term.h), and loading and relocating libz3 (with
 * libstdc++) cost every process about 3.5 ms on the reference VM.
 *
 * solver/ includes this instead of <z3.h>. In the library's own objects (built with
 * SG_Z3_BOUND_LATE) every Z3 function solver/ calls is named by a macro that calls
 * through its slot, so call sites read as plain Z3 calls; sg_z3_load() must have
 * returned 0 before any of them runs: sg_ctxpool_take() loads it, and every other
 * call is on a context it made. Code outside the library (the white-box tests) calls
 * Z3 directly and links it.
 */
#ifndef SG_SOLVER_Z3FNS_H
#define SG_SOLVER_Z3FNS_H

#include <z3.h>

#include "shapegate/error.h"

/* The Z3 functions solver/ calls; a new call adds its name here and its macro below. */
#define SG_Z3_FUNCTIONS(X) \
    X(Z3_add_const_interp) X(Z3_ast_to_string) X(Z3_ast_vector_dec_ref) X(Z3_ast_vector_get) \
    X(Z3_ast_vector_inc_ref) X(Z3_ast_vector_size) X(Z3_dec_ref) X(Z3_del_config) X(Z3_del_context) \
    X(Z3_get_app_decl) X(Z3_get_app_num_args) X(Z3_get_bool_value) X(Z3_get_denominator) \
    X(Z3_get_error_code) X(Z3_get_error_msg) X(Z3_get_numeral_int64) X(Z3_get_numeral_string) \
    X(Z3_get_numerator) X(Z3_get_sort) X(Z3_get_sort_kind) X(Z3_get_version) X(Z3_inc_ref) \
    X(Z3_interrupt) X(Z3_is_app) X(Z3_is_eq_ast) X(Z3_is_numeral_ast) X(Z3_mk_add) X(Z3_mk_and) \
    X(Z3_mk_bool_sort) X(Z3_mk_config) X(Z3_mk_const) X(Z3_mk_context_rc) X(Z3_mk_div) X(Z3_mk_eq) \
    X(Z3_mk_false) X(Z3_mk_fresh_const) X(Z3_mk_ge) X(Z3_mk_gt) X(Z3_mk_implies) X(Z3_mk_int2real) \
    X(Z3_mk_int64) X(Z3_mk_int_sort) X(Z3_mk_ite) X(Z3_mk_le) X(Z3_mk_lt) X(Z3_mk_mod) \
    X(Z3_mk_model) X(Z3_mk_mul) X(Z3_mk_not) X(Z3_mk_numeral) X(Z3_mk_or) X(Z3_mk_params) \
    X(Z3_mk_power) X(Z3_mk_real2int) X(Z3_mk_real_sort) X(Z3_mk_simple_solver) X(Z3_mk_solver) \
    X(Z3_mk_solver_from_tactic) X(Z3_mk_string_symbol) X(Z3_mk_sub) X(Z3_mk_tactic) X(Z3_mk_true) \
    X(Z3_mk_unary_minus) X(Z3_model_dec_ref) X(Z3_model_eval) X(Z3_model_get_const_decl) \
    X(Z3_model_get_const_interp) X(Z3_model_get_num_consts) X(Z3_model_inc_ref) X(Z3_params_dec_ref) \
    X(Z3_params_inc_ref) X(Z3_params_set_bool) X(Z3_params_set_uint) X(Z3_set_ast_print_mode) \
    X(Z3_set_error_handler) X(Z3_simplify_ex) X(Z3_solver_assert) X(Z3_solver_check) \
    X(Z3_solver_check_assumptions) X(Z3_solver_dec_ref) X(Z3_solver_get_model) \
    X(Z3_solver_get_num_scopes) X(Z3_solver_get_reason_unknown) X(Z3_solver_get_unsat_core) \
    X(Z3_solver_inc_ref) X(Z3_solver_pop) X(Z3_solver_push) X(Z3_solver_reset) \
    X(Z3_solver_set_params) X(Z3_substitute) X(Z3_tactic_and_then) X(Z3_tactic_dec_ref) \
    X(Z3_tactic_inc_ref) X(Z3_tactic_or_else) X(Z3_tactic_using_params) X(Z3_to_app)

/* A slot per function, of its own pointer type. */
typedef struct sg_z3_table {
#define SG_Z3_SLOT(f) __typeof__(&f) f;
    SG_Z3_FUNCTIONS(SG_Z3_SLOT)
#undef SG_Z3_SLOT
} sg_z3_table;

extern sg_z3_table sg_z3_fns;

/* Load libz3 (once per process): 0, or SG_ERROR "cannot load libz3.so.N: ..." in err. */
int sg_z3_load(sg_error *err);

#if defined(SG_Z3_BOUND_LATE) && !defined(SG_Z3FNS_IMPL)
#define Z3_add_const_interp (*sg_z3_fns.Z3_add_const_interp)
#define Z3_ast_to_string (*sg_z3_fns.Z3_ast_to_string)
#define Z3_ast_vector_dec_ref (*sg_z3_fns.Z3_ast_vector_dec_ref)
#define Z3_ast_vector_get (*sg_z3_fns.Z3_ast_vector_get)
#define Z3_ast_vector_inc_ref (*sg_z3_fns.Z3_ast_vector_inc_ref)
#define Z3_ast_vector_size (*sg_z3_fns.Z3_ast_vector_size)
#define Z3_dec_ref (*sg_z3_fns.Z3_dec_ref)
#define Z3_del_config (*sg_z3_fns.Z3_del_config)
#define Z3_del_context (*sg_z3_fns.Z3_del_context)
#define Z3_get_app_decl (*sg_z3_fns.Z3_get_app_decl)
#define Z3_get_app_num_args (*sg_z3_fns.Z3_get_app_num_args)
#define Z3_get_bool_value (*sg_z3_fns.Z3_get_bool_value)
#define Z3_get_denominator (*sg_z3_fns.Z3_get_denominator)
#define Z3_get_error_code (*sg_z3_fns.Z3_get_error_code)
#define Z3_get_error_msg (*sg_z3_fns.Z3_get_error_msg)
#define Z3_get_numeral_int64 (*sg_z3_fns.Z3_get_numeral_int64)
#define Z3_get_numeral_string (*sg_z3_fns.Z3_get_numeral_string)
#define Z3_get_numerator (*sg_z3_fns.Z3_get_numerator)
#define Z3_get_sort (*sg_z3_fns.Z3_get_sort)
#define Z3_get_sort_kind (*sg_z3_fns.Z3_get_sort_kind)
#define Z3_get_version (*sg_z3_fns.Z3_get_version)
#define Z3_inc_ref (*sg_z3_fns.Z3_inc_ref)
#define Z3_interrupt (*sg_z3_fns.Z3_interrupt)
#define Z3_is_app (*sg_z3_fns.Z3_is_app)
#define Z3_is_eq_ast (*sg_z3_fns.Z3_is_eq_ast)
#define Z3_is_numeral_ast (*sg_z3_fns.Z3_is_numeral_ast)
#define Z3_mk_add (*sg_z3_fns.Z3_mk_add)
#define Z3_mk_and (*sg_z3_fns.Z3_mk_and)
#define Z3_mk_bool_sort (*sg_z3_fns.Z3_mk_bool_sort)
#define Z3_mk_config (*sg_z3_fns.Z3_mk_config)
#define Z3_mk_const (*sg_z3_fns.Z3_mk_const)
#define Z3_mk_context_rc (*sg_z3_fns.Z3_mk_context_rc)
#define Z3_mk_div (*sg_z3_fns.Z3_mk_div)
#define Z3_mk_eq (*sg_z3_fns.Z3_mk_eq)
#define Z3_mk_false (*sg_z3_fns.Z3_mk_false)
#define Z3_mk_fresh_const (*sg_z3_fns.Z3_mk_fresh_const)
#define Z3_mk_ge (*sg_z3_fns.Z3_mk_ge)
#define Z3_mk_gt (*sg_z3_fns.Z3_mk_gt)
#define Z3_mk_implies (*sg_z3_fns.Z3_mk_implies)
#define Z3_mk_int2real (*sg_z3_fns.Z3_mk_int2real)
#define Z3_mk_int64 (*sg_z3_fns.Z3_mk_int64)
#define Z3_mk_int_sort (*sg_z3_fns.Z3_mk_int_sort)
#define Z3_mk_ite (*sg_z3_fns.Z3_mk_ite)
#define Z3_mk_le (*sg_z3_fns.Z3_mk_le)
#define Z3_mk_lt (*sg_z3_fns.Z3_mk_lt)
#define Z3_mk_mod (*sg_z3_fns.Z3_mk_mod)
#define Z3_mk_model (*sg_z3_fns.Z3_mk_model)
#define Z3_mk_mul (*sg_z3_fns.Z3_mk_mul)
#define Z3_mk_not (*sg_z3_fns.Z3_mk_not)
#define Z3_mk_numeral (*sg_z3_fns.Z3_mk_numeral)
#define Z3_mk_or (*sg_z3_fns.Z3_mk_or)
#define Z3_mk_params (*sg_z3_fns.Z3_mk_params)
#define Z3_mk_power (*sg_z3_fns.Z3_mk_power)
#define Z3_mk_real2int (*sg_z3_fns.Z3_mk_real2int)
#define Z3_mk_real_sort (*sg_z3_fns.Z3_mk_real_sort)
#define Z3_mk_simple_solver (*sg_z3_fns.Z3_mk_simple_solver)
#define Z3_mk_solver (*sg_z3_fns.Z3_mk_solver)
#define Z3_mk_solver_from_tactic (*sg_z3_fns.Z3_mk_solver_from_tactic)
#define Z3_mk_string_symbol (*sg_z3_fns.Z3_mk_string_symbol)
#define Z3_mk_sub (*sg_z3_fns.Z3_mk_sub)
#define Z3_mk_tactic (*sg_z3_fns.Z3_mk_tactic)
#define Z3_mk_true (*sg_z3_fns.Z3_mk_true)
#define Z3_mk_unary_minus (*sg_z3_fns.Z3_mk_unary_minus)
#define Z3_model_dec_ref (*sg_z3_fns.Z3_model_dec_ref)
#define Z3_model_eval (*sg_z3_fns.Z3_model_eval)
#define Z3_model_get_const_decl (*sg_z3_fns.Z3_model_get_const_decl)
#define Z3_model_get_const_interp (*sg_z3_fns.Z3_model_get_const_interp)
#define Z3_model_get_num_consts (*sg_z3_fns.Z3_model_get_num_consts)
#define Z3_model_inc_ref (*sg_z3_fns.Z3_model_inc_ref)
#define Z3_params_dec_ref (*sg_z3_fns.Z3_params_dec_ref)
#define Z3_params_inc_ref (*sg_z3_fns.Z3_params_inc_ref)
#define Z3_params_set_bool (*sg_z3_fns.Z3_params_set_bool)
#define Z3_params_set_uint (*sg_z3_fns.Z3_params_set_uint)
#define Z3_set_ast_print_mode (*sg_z3_fns.Z3_set_ast_print_mode)
#define Z3_set_error_handler (*sg_z3_fns.Z3_set_error_handler)
#define Z3_simplify_ex (*sg_z3_fns.Z3_simplify_ex)
#define Z3_solver_assert (*sg_z3_fns.Z3_solver_assert)
#define Z3_solver_check (*sg_z3_fns.Z3_solver_check)
#define Z3_solver_check_assumptions (*sg_z3_fns.Z3_solver_check_assumptions)
#define Z3_solver_dec_ref (*sg_z3_fns.Z3_solver_dec_ref)
#define Z3_solver_get_model (*sg_z3_fns.Z3_solver_get_model)
#define Z3_solver_get_num_scopes (*sg_z3_fns.Z3_solver_get_num_scopes)
#define Z3_solver_get_reason_unknown (*sg_z3_fns.Z3_solver_get_reason_unknown)
#define Z3_solver_get_unsat_core (*sg_z3_fns.Z3_solver_get_unsat_core)
#define Z3_solver_inc_ref (*sg_z3_fns.Z3_solver_inc_ref)
#define Z3_solver_pop (*sg_z3_fns.Z3_solver_pop)
#define Z3_solver_push (*sg_z3_fns.Z3_solver_push)
#define Z3_solver_reset (*sg_z3_fns.Z3_solver_reset)
#define Z3_solver_set_params (*sg_z3_fns.Z3_solver_set_params)
#define Z3_substitute (*sg_z3_fns.Z3_substitute)
#define Z3_tactic_and_then (*sg_z3_fns.Z3_tactic_and_then)
#define Z3_tactic_dec_ref (*sg_z3_fns.Z3_tactic_dec_ref)
#define Z3_tactic_inc_ref (*sg_z3_fns.Z3_tactic_inc_ref)
#define Z3_tactic_or_else (*sg_z3_fns.Z3_tactic_or_else)
#define Z3_tactic_using_params (*sg_z3_fns.Z3_tactic_using_params)
#define Z3_to_app (*sg_z3_fns.Z3_to_app)
#endif

#endif
