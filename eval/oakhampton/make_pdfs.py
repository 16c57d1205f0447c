#!/usr/bin/env python3
"""Writes the fixture's PDF pages (kb/<tenant>/*.pdf) with a small hand-rolled PDF writer.

Each PDF uses the standard Helvetica Type 1 font (no embedding), one content stream per page,
a running header line and a "Page N of M" footer, and an /Info dictionary with /Title. The
page text is ASCII only. Run: python3 eval/oakhampton/make_pdfs.py (the output is committed).
Metadata for the help centre (document_id, tenant, groups, ...) is in <file>.pdf.meta.yaml.
"""

import os
import runpy

HERE = os.path.dirname(os.path.abspath(__file__))


# The writer is eval/fernhill/make_pdfs.py's (one PDF per document, same layout).
_WRITER = runpy.run_path(os.path.join(HERE, "..", "fernhill", "make_pdfs.py"))


DOCS = {}

DOCS["oakhampton/parent-handbook-2026"] = (
    "Parent handbook 2026/27",
    "Oakhampton Nurseries - Parent handbook 2026/27 - Mill Lane, Castle Park, Hatherleigh Road, Exbourne",
    """
# Parent handbook 2026/27
Welcome to Oakhampton Nurseries. This handbook explains how we care for
your child day to day. Please keep it, and check the Parent Help centre
for the latest fees, closure days and policies.

1. YOUR CHILD'S KEY PERSON
Every child has a key person, who gets to know your child and your family
well, and a buddy who steps in when the key person is away. Your key
person writes regular observations in the Oakhampton Family app and meets
you twice a year to talk about your child's progress. For children aged
2 we also complete the two-year progress check between 24 and 36 months
and share it with your health visitor if you agree.

2. WHAT TO BRING EACH DAY
- at least two sets of spare clothes (three while potty training)
- a sun hat in summer and a warm hat and gloves in winter
- wellies and a waterproof coat: we play outside in all weathers
- a comforter or dummy if your child needs one to sleep
- formula in an unopened tin, for babies who are not yet on cow's milk
Please label everything with your child's name. We can't be responsible
for unlabelled clothes, and lost property is given to a local charity
at the end of each term.

3. SUN CREAM
From April to September please put sun cream on your child before they
arrive. We reapply factor 50 sun cream after lunch, using our own unless
you give us a named bottle. Children without a sun hat stay in the shade.

4. OUTINGS
We take children on short walks and local outings, such as the park,
the library and the duck pond. You give permission for local walks when
you register, and we ask separately for any trip that needs a car, bus
or minibus. On outings we always have more staff than in the rooms.
<<PAGE>>
5. HOLIDAY CLUB AT CASTLE PARK
In school holidays Castle Park runs a holiday club for children aged 4
to 11. Children bring a packed lunch; we provide a snack and drinks.

Session                 Times                   Price
Full day                8:00am - 5:30pm         GBP 45.00
Morning                 8:00am - 12:30pm        GBP 27.00
Afternoon               12:30pm - 5:30pm        GBP 27.00
Early drop-off          from 7:30am             GBP 5.00

Holiday club sessions are booked in the app and paid for when you book.
They can be cancelled free of charge up to 7 days before; after that the
session is charged in full. Tax-Free Childcare can be used for holiday
club, as for nursery fees.

6. CHARGES AT A GLANCE
Item                                        Charge
Registration fee, per child                 GBP 75.00
Deposit, fee-paying place                   GBP 350.00
Late booking charge (under 48 hours)        GBP 6.00 per session
Late collection, each 15 minutes or part    GBP 15.00
Late payment fee                            GBP 25.00
Replacement door fob                        GBP 8.50
Lost library book from the nursery          GBP 6.00
Session prices are on the Session fees page of the Parent Help centre.

7. SETTLING IN AND MOVING ROOMS
Children usually move from Acorns to Saplings at about 2 years and from
Saplings to Oaks at about 3 years, when they are ready. The key person
arranges visits to the new room over 2 weeks before the move, and we tell
you the date of the move at least 4 weeks ahead. Children's fees change
to the new room's price from the 1st of the following month.

8. IF YOU HAVE A CONCERN
Talk to your key person or your nursery manager first. Written complaints
are acknowledged within 2 working days and answered in full within 28
days. Our complaints procedure and the Parent terms and conditions are in
the Parent Help centre, and you may contact Ofsted at any time. Thank you
for choosing us to care for your child. We look forward to getting to
know your family over the coming months, and to helping your child grow
in confi-
dence every day.
""",
)

DOCS["printhaus/trade-price-list"] = (
    "Printhaus Trade: plans and volume bonus",
    "Printhaus GmbH - Trade price list - plans, volume bonus and terms - valid from 1 March 2026",
    """
# Printhaus Trade: plans and volume bonus
For agencies, print resellers and companies that order regularly.
All prices are net, plus 19% German VAT where it applies.
Valid from 1 March 2026 until further notice.

1. TRADE PLANS
Plan             Monthly fee (net)    Discount on print    Payment terms
Trade Basic      EUR 0                5%                   Card or prepayment
Trade Pro        EUR 29.00            10%                  Invoice, 14 days
Trade Agency     EUR 79.00            15%                  Invoice, 30 days

The discount applies to the print price, not to delivery, surcharges for
Express, Overnight or Same day, proofs or finishing. On Trade Pro and
Trade Agency your own logo can go on the delivery note (see section 5).
Trade Agency also includes a named account manager.

You can move to a higher plan at any time, and the new plan starts on the
1st of the next month. To cancel Trade Pro or Trade Agency, give 1 month's
notice to the end of a calendar month, by email to the trade team.

2. VOLUME BONUS
On top of your plan discount, we add a volume bonus to every order. It is
based on your net print spend in the previous calendar quarter:

Quarterly print spend (net)     Volume bonus
Under EUR 2,500                 none
EUR 2,500 to 9,999              2%
EUR 10,000 to 24,999            4%
EUR 25,000 and more             6%*
* Trade Agency only. On other plans the volume bonus is capped at 4%.

The bonus is worked out on the first working day of each quarter and
shown in your trade account.
<<PAGE>>
3. WHO CAN OPEN A TRADE ACCOUNT
You need a business registration, such as a trade licence (Gewerbe-
anmeldung) or a commercial register extract, or a valid VAT ID. Send it
with the application form in your account. We check applications within
2 working days and tell you by email.

4. PAYING BY INVOICE
Trade Pro customers can have open invoices of up to EUR 5,000 in total,
and Trade Agency customers up to EUR 20,000. Orders above the limit must
be paid by card or in advance until older invoices are paid. If a trade
invoice is more than 30 days overdue, we switch the account to
prepayment until it is paid.

5. NEUTRAL DELIVERY
Parcels for trade customers never show Printhaus branding or prices. With
Trade Pro and Trade Agency we can print your own logo and address on the
delivery note for EUR 0.50 per parcel. Trade Basic customers can choose
plain neutral delivery free of charge.

6. SAMPLES FOR YOUR CUSTOMERS
Trade customers can order up to 5 unbranded sample packs a year for their
own customers, free of charge within Zones 1 to 3.

7. CONTACT
Trade team: trade@printhaus.example, phone +49 30 23125 430,
Monday to Thursday 09:00 to 17:00 and Friday 09:00 to 14:00.
Printhaus GmbH, Werkstrasse 18, 04229 Leipzig, Germany.
""",
)


def main():
    _WRITER["write_all"](DOCS, HERE, "oakhampton make_pdfs.py")


if __name__ == "__main__":
    main()
